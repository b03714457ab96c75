// The portal's one script: it talks to the customer's wallet through
// EIP-1193 (window.ethereum) and to this server (same origin) only.
"use strict";
(function () {
  const body = document.body;
  const csrf = body.dataset.csrf;
  const prefix = body.dataset.prefix;
  const wallet = document.getElementById("wallet");
  if (!csrf || !wallet) return;
  const $ = (id) => document.getElementById(id);
  const chainId = Number(wallet.dataset.chainId);
  const chainHex = "0x" + chainId.toString(16);
  let clockSkew = 0; // server now − local now, seconds
  let withdrawal = null;
  let me = ""; // the wallet's address once it shared it
  let pendingOwner = ""; // an address connected, not yet confirmed
  let busy = false; // a withdrawal step is being sent
  let depositing = false; // a deposit is being signed and sent
  let awaiting = null; // a withdrawal step sent from the wallet, not yet seen on chain
  let ownerChange = null; // the owner change in flight or proposed (status)
  let walletChain = 0; // the chain the wallet is on, once known
  const shownRelays = new Set(); // relays seen other than available on this page
  const doneAt = new Map(); // txHash → when this page saw it become available

  const usd = (c) => {
    const neg = c < 0;
    const a = Math.abs(c);
    const whole = Math.floor(a / 100).toLocaleString("en-US");
    return (neg ? "−" : "") + "$" + whole + "." + String(a % 100).padStart(2, "0");
  };

  async function post(path, data) {
    const res = await fetch(prefix + path, {
      method: "POST",
      headers: { "Content-Type": "application/json", "Accept": "application/json", "X-CSRF-Token": csrf },
      body: JSON.stringify(data),
    });
    const out = await res.json().catch(() => ({}));
    if (!res.ok) throw new Error((out.error && out.error.message) || "The server refused the request (" + res.status + ").");
    return out;
  }

  function say(id, msg) {
    const el = $(id);
    if (!el) return;
    el.textContent = msg || "";
    el.hidden = !msg;
  }

  // checksum is an address in its EIP-55 form, as the server writes it
  // (a wallet may share it in lowercase).
  const checksums = new Map();
  async function checksum(a) {
    if (!a) return "";
    if (checksums.has(a)) return checksums.get(a);
    try {
      const res = await fetch(prefix + "address?a=" + encodeURIComponent(a), { headers: { "Accept": "application/json" } });
      if (!res.ok) return a;
      const out = await res.json();
      checksums.set(a, out.address);
      return out.address;
    } catch (e) {
      return a;
    }
  }

  function walletError(e) {
    if (e && e.code === 4001) return "You declined in your wallet: nothing was done.";
    return (e && e.message) || String(e);
  }

  // account returns the wallet's address on the right chain, or throws.
  async function account() {
    if (!window.ethereum) throw new Error("No wallet found in this browser: install one (for example MetaMask) and reload.");
    const accounts = await window.ethereum.request({ method: "eth_requestAccounts" });
    if (!accounts || !accounts.length) throw new Error("Your wallet shared no address.");
    const current = await window.ethereum.request({ method: "eth_chainId" });
    walletChain = Number(current);
    if (walletChain !== chainId) {
      $("switch-chain").hidden = false;
      throw new Error("Your wallet is on another network (chain " + walletChain + "); this account is on chain " + chainId + ". Switch your wallet's network.");
    }
    $("switch-chain").hidden = true;
    me = await checksum(accounts[0]);
    buttons();
    return me;
  }

  $("switch-chain") && $("switch-chain").addEventListener("click", async () => {
    try {
      await window.ethereum.request({ method: "wallet_switchEthereumChain", params: [{ chainId: chainHex }] });
      $("switch-chain").hidden = true;
      say("wallet-state", "Your wallet is on chain " + chainId + " now.");
    } catch (e) {
      say("wallet-state", walletError(e));
    }
  });

  $("connect") && $("connect").addEventListener("click", async () => {
    const btn = $("connect");
    btn.disabled = true;
    try {
      const address = await account();
      if (wallet.dataset.owner && wallet.dataset.owner.toLowerCase() === address.toLowerCase()) {
        say("wallet-state", "Your wallet " + address + " owns this balance.");
        return;
      }
      pendingOwner = "";
      say("wallet-state", "Sign the message in your wallet to connect " + address + "…");
      const grant = await post("connect/grant", { address });
      const signature = await window.ethereum.request({
        method: "eth_signTypedData_v4", params: [address, JSON.stringify(grant.typedData)],
      });
      const change = await post("connect", { address, nonce: grant.nonce, signature });
      pendingOwner = change.effective === "after_notice" ? "" : change.address;
      say("wallet-state", change.effective === "after_notice"
        ? "Requested: " + change.address + " will own this balance after the withdrawal notice, unless the wallet that owns it now cancels the change."
        : "Connected: " + change.address + " will own this balance once the network confirms it.");
      poll();
    } catch (e) {
      say("wallet-state", walletError(e));
    } finally {
      btn.disabled = false;
    }
  });

  const relays = new Map();
  const relayFade = 20000; // ms an available deposit stays listed here
  const clock = (ms) => new Date(ms + clockSkew * 1000).toISOString().slice(11, 19) + " UTC";
  function showRelays() {
    const ul = $("relays");
    if (!ul) return;
    ul.textContent = "";
    const words = {
      pending: "pending: sent, waiting for the network",
      confirming: "confirming",
      confirmed: "confirmed, being added to your balance",
      available: "available",
      failed: "not sent by us: the network refused our transaction (if someone else delivered your signed deposit first, it shows in your balance and statement; otherwise nothing was taken)",
      sent: "pending: sent, waiting for the network",
    };
    const now = Date.now();
    for (const r of relays.values()) {
      // A deposit already available when the page opened is in the
      // activity list only; one that became available here says when,
      // then fades into that list.
      if (r.state === "available" && !shownRelays.has(r.txHash)) continue;
      if (r.state !== "available") shownRelays.add(r.txHash);
      if (r.state === "available" && !doneAt.has(r.txHash)) doneAt.set(r.txHash, now);
      const age = r.state === "available" ? now - doneAt.get(r.txHash) : 0;
      if (age > relayFade + 1500) continue;
      const li = document.createElement("li");
      li.className = "relay state-" + r.state;
      li.dataset.state = r.state;
      li.textContent = "Deposit of " + usd(r.amount) + ": " + (words[r.state] || r.state) +
        (r.state === "confirming" ? " (" + r.confirmations + ")" : "") +
        (r.state === "available" ? " at " + clock(doneAt.get(r.txHash)) + "; it is in Recent activity below." : "");
      if (age > relayFade) li.classList.add("fading");
      ul.appendChild(li);
    }
  }

  $("deposit-form") && $("deposit-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    depositing = true;
    buttons();
    say("deposit-error", "");
    try {
      const from = await account();
      const prep = await post("deposit/prepare", { from, amount: $("deposit-amount").value });
      const signature = await window.ethereum.request({
        method: "eth_signTypedData_v4", params: [from, JSON.stringify(prep.typedData)],
      });
      const sent = await post("deposit", Object.assign({}, prep.authorization, { signature }));
      relays.set(sent.txHash, { txHash: sent.txHash, amount: sent.amount, state: "pending", confirmations: 0 });
      shownRelays.add(sent.txHash);
      showRelays();
      $("deposit-amount").value = "";
      poll();
    } catch (e) {
      say("deposit-error", walletError(e));
    } finally {
      depositing = false;
      buttons();
    }
  });

  // cents reads "10", "10.5" or "$1,000.00" as cents, as the server does.
  function cents(v) {
    const m = /^(\d{1,9})(?:\.(\d{1,2}))?$/.exec(String(v || "").trim().replace(/^\$/, "").replace(/,/g, ""));
    if (!m) return 0;
    return Number(m[1]) * 100 + (m[2] ? Number(m[2].padEnd(2, "0")) : 0);
  }

  // The owner's wallet cancels an owner change it did not ask for.
  $("cancel-owner-change") && $("cancel-owner-change").addEventListener("click", async () => {
    say("wallet-state", "");
    busy = true;
    buttons();
    try {
      const from = await account();
      const call = await post("owner/cancel", {});
      if (call.from.toLowerCase() !== from.toLowerCase()) {
        throw new Error("Only the wallet that owns this balance (" + call.from + ") can cancel the change; your wallet is " + from + ".");
      }
      await window.ethereum.request({ method: "eth_sendTransaction", params: [{ from, to: call.to, data: call.data }] });
      say("wallet-state", "Cancel of the change to " + call.next + ": pending, sent from your wallet and waiting for the network…");
      poll();
    } catch (e) {
      say("wallet-state", walletError(e));
    } finally {
      busy = false;
      buttons();
    }
  });

  async function ownerCall(method, amount) {
    say("withdraw-error", "");
    busy = true;
    buttons();
    try {
      const from = await account();
      const call = await post("withdrawal/call", { method, amount: amount || "" });
      if (call.from.toLowerCase() !== from.toLowerCase()) {
        throw new Error("Only the wallet that owns this balance (" + call.from + ") can do this; your wallet is " + from + ".");
      }
      await window.ethereum.request({ method: "eth_sendTransaction", params: [{ from, to: call.to, data: call.data }] });
      const what = { requestWithdrawal: "Withdrawal request of " + usd(cents(amount)), cancelWithdrawal: "Cancel of the withdrawal request",
        withdraw: "Withdrawal" }[method];
      // A request is seen when the chain shows its amount with a new end
      // of notice (the same amount requested again restarts the notice).
      awaiting = { method, cents: method === "requestWithdrawal" ? cents(amount) : 0, before: withdrawal ? withdrawal.availableAt : 0 };
      say("withdrawal-sent", what + ": pending, sent from your wallet and waiting for the network…");
      $("withdrawal-sent").dataset.state = "pending";
      if (method === "requestWithdrawal") $("withdraw-amount").value = "";
      poll();
    } catch (e) {
      say("withdraw-error", walletError(e));
    } finally {
      busy = false;
      buttons();
    }
  }
  $("withdraw-form") && $("withdraw-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    ownerCall("requestWithdrawal", $("withdraw-amount").value);
  });
  $("cancel-withdrawal") && $("cancel-withdrawal").addEventListener("click", () => ownerCall("cancelWithdrawal"));
  $("withdraw") && $("withdraw").addEventListener("click", () => ownerCall("withdraw"));

  function countdown() {
    const el = $("countdown");
    if (!el) return;
    if (!withdrawal || !withdrawal.pending) {
      el.textContent = "";
      buttons();
      return;
    }
    const left = secondsLeft();
    el.textContent = left <= 0 ? "Due now: withdraw it." : "Available in " + span(left);
    buttons();
  }

  // secondsLeft is how long the withdrawal under notice still waits.
  function secondsLeft() {
    return withdrawal.availableAt - (Date.now() / 1000 + clockSkew);
  }
  function span(left) {
    const s = Math.ceil(left);
    const d = Math.floor(s / 86400), h = Math.floor((s % 86400) / 3600), m = Math.floor((s % 3600) / 60);
    return (d ? d + "d " : "") + String(h).padStart(2, "0") + ":" + String(m).padStart(2, "0") + ":" + String(s % 60).padStart(2, "0");
  }

  // enable turns a button on, or off with the reason shown under it.
  // A reason already shown under an earlier button is not repeated.
  function enable(id, why, shown) {
    const b = $(id);
    if (!b) return;
    b.disabled = !!why;
    b.title = why || "";
    const line = id === "request-withdrawal" ? "request-why" : id === "cancel-withdrawal" ? "cancel-why" : id + "-why";
    say(line, why && !(shown && shown.has(why)) ? why : "");
    if (why && shown) shown.add(why);
  }

  // buttons offers only what the contract would accept now: the owner's
  // wallet requests, cancels a withdrawal under notice, and withdraws it
  // once due.
  function buttons() {
    if (!$("withdraw")) return;
    const owner = wallet.dataset.owner || "";
    let who = "";
    if (!owner) who = "No wallet owns this balance yet: connect yours first.";
    else if (!me) who = "Connect the wallet that owns this balance (" + owner + ") first.";
    else if (me.toLowerCase() !== owner.toLowerCase()) who = "Only the wallet that owns this balance (" + owner + ") can do this; yours is " + me + ".";
    const pending = withdrawal && withdrawal.pending > 0;
    const wait = busy ? "Waiting for your wallet…" : "";
    const shown = new Set();
    enable("request-withdrawal", wait || who, shown);
    const none = "Nothing is under notice to cancel or withdraw: request a withdrawal first.";
    enable("cancel-withdrawal", wait || who || (pending ? "" : none), shown);
    enable("withdraw", wait || who || (pending ? "" : none) ||
      (secondsLeft() > 0 ? "Still under notice: available in " + span(secondsLeft()) + "." : ""), shown);
    enable("cancel-owner-change", wait || (!owner ? "No wallet owns this balance." : !me ? "Connect the wallet that owns this balance (" + owner + ") to cancel it." :
      me.toLowerCase() !== owner.toLowerCase() ? "Only the wallet that owns this balance (" + owner + ") can cancel it; yours is " + me + "." :
      ownerChange && ownerChange.state !== "proposed" ? "The change is not on chain yet: wait until the network confirms it." : ""));
    enable("deposit", depositing ? "Waiting for your wallet…" :
      window.ethereum ? "" : "No wallet found in this browser: install one (for example MetaMask) and reload.");
  }

  function showOwnerChange(oc) {
    ownerChange = oc;
    const box = $("owner-change");
    if (!box) return;
    box.hidden = !oc;
    box.dataset.state = oc ? oc.state : "";
    if (!oc) return;
    const when = oc.effectiveAt ? new Date(oc.effectiveAt * 1000).toISOString().slice(0, 16).replace("T", " ") + " UTC" : "";
    $("owner-change-line").textContent = oc.state === "proposed"
      ? "A change of owner to " + oc.address + " is proposed: it takes this balance on " + when + " unless the wallet that owns it now cancels it."
      : "A change of owner to " + oc.address + " is on its way to the network.";
    buttons();
  }

  let polling = false;
  async function poll() {
    if (polling) return;
    polling = true;
    try {
      const res = await fetch(prefix + "status", { headers: { "Accept": "application/json" } });
      if (!res.ok) return;
      const st = await res.json();
      clockSkew = st.now - Date.now() / 1000;
      const b = st.balance;
      $("available").textContent = usd(b.available);
      $("onchain").textContent = usd(b.onChain);
      $("reserved").textContent = usd(b.reserved);
      $("pendingWithdrawal").textContent = usd(b.pendingWithdrawal);
      body.dataset.available = String(b.available);
      if (st.withdrawal) {
        withdrawal = st.withdrawal;
        if (awaiting) {
          const p = withdrawal.pending;
          const seen = awaiting.method === "requestWithdrawal" ? p === awaiting.cents && withdrawal.availableAt !== awaiting.before : p === 0;
          if (seen) {
            awaiting = null;
            say("withdrawal-sent", "Confirmed by the network.");
            $("withdrawal-sent").dataset.state = "confirmed";
            setTimeout(() => { if (!awaiting) say("withdrawal-sent", ""); }, 10000);
          }
        }
        body.dataset.withdrawalPending = String(withdrawal.pending);
        const ws = $("withdrawal-state");
        if (ws) {
          ws.textContent = withdrawal.pending
            ? usd(withdrawal.pending) + " under notice, available " + new Date(withdrawal.availableAt * 1000).toISOString().slice(0, 19).replace("T", " ") + " UTC."
            : "No withdrawal under notice.";
        }
      }
      if (pendingOwner && st.chainOwner && st.chainOwner.toLowerCase() === pendingOwner.toLowerCase()) {
        pendingOwner = "";
        say("wallet-state", "Confirmed: your wallet owns this balance now.");
      }
      if (st.activity !== undefined && $("activity") && $("activity").dataset.html !== st.activity) {
        $("activity").innerHTML = st.activity; // rendered by the server's template, escaped there
        $("activity").dataset.html = st.activity;
      }
      if (st.chainOwner !== undefined && (st.chainOwner || "") !== (body.dataset.owner || "")) {
        body.dataset.owner = st.chainOwner || "";
        wallet.dataset.owner = st.chainOwner || "";
        const line = $("owner-line");
        if (line && st.chainOwner) {
          line.textContent = "This balance is owned by " + st.chainOwner + ": only that wallet can withdraw from it.";
          if ($("connect")) $("connect").textContent = "Use my wallet";
        }
      }
      showOwnerChange(st.ownerChange || null);
      for (const r of st.relays || []) relays.set(r.txHash, r);
      showRelays();
      countdown();
    } catch (e) {
      // The next poll tries again.
    } finally {
      polling = false;
    }
  }
  if (window.ethereum) {
    // The address a wallet already shares with this site, without asking.
    window.ethereum.request({ method: "eth_accounts" }).then(async (a) => { me = await checksum((a && a[0]) || ""); buttons(); }, () => {});
    // The page follows the wallet: another account, or another network.
    if (typeof window.ethereum.on === "function") {
      window.ethereum.on("accountsChanged", async (a) => {
        me = await checksum((a && a[0]) || "");
        body.dataset.account = me;
        say("wallet-state", me ? "Your wallet now uses " + me + "." : "Your wallet shares no account with this page now.");
        buttons();
      });
      window.ethereum.on("chainChanged", (id) => {
        walletChain = Number(id);
        body.dataset.walletChain = String(walletChain);
        const right = walletChain === chainId;
        if ($("switch-chain")) $("switch-chain").hidden = right;
        say("wallet-state", right ? "Your wallet is on chain " + chainId + " now, this account's network." :
          "Your wallet moved to another network (chain " + walletChain + "); this account is on chain " + chainId + ". Switch back to use it.");
        buttons();
      });
    }
  }
  buttons();
  poll();
  setInterval(poll, 1500);
  setInterval(countdown, 1000);
})();
