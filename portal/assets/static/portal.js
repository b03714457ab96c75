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
    if (Number(current) !== chainId) {
      $("switch-chain").hidden = false;
      throw new Error("Your wallet is on chain " + Number(current) + "; this account is on chain " + chainId + ". Switch your wallet's network.");
    }
    $("switch-chain").hidden = true;
    return accounts[0];
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
      say("wallet-state", "Sign the message in your wallet to connect " + address + "…");
      const grant = await post("connect/grant", { address });
      const signature = await window.ethereum.request({
        method: "eth_signTypedData_v4", params: [address, JSON.stringify(grant.typedData)],
      });
      const change = await post("connect", { address, nonce: grant.nonce, signature });
      say("wallet-state", change.effective === "after_notice"
        ? "Requested: " + change.address + " will own this balance after the withdrawal notice, unless the wallet that owns it now cancels the change."
        : "Connected: " + change.address + " will own this balance once the network confirms it.");
    } catch (e) {
      say("wallet-state", walletError(e));
    } finally {
      btn.disabled = false;
    }
  });

  const relays = new Map();
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
    for (const r of relays.values()) {
      const li = document.createElement("li");
      li.className = "relay state-" + r.state;
      li.dataset.state = r.state;
      li.textContent = "Deposit of " + usd(r.amount) + ": " + (words[r.state] || r.state) +
        (r.state === "confirming" ? " (" + r.confirmations + ")" : "");
      ul.appendChild(li);
    }
  }

  $("deposit-form") && $("deposit-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const btn = $("deposit");
    btn.disabled = true;
    say("deposit-error", "");
    try {
      const from = await account();
      const prep = await post("deposit/prepare", { from, amount: $("deposit-amount").value });
      const signature = await window.ethereum.request({
        method: "eth_signTypedData_v4", params: [from, JSON.stringify(prep.typedData)],
      });
      const sent = await post("deposit", Object.assign({}, prep.authorization, { signature }));
      relays.set(sent.txHash, { txHash: sent.txHash, amount: sent.amount, state: "pending", confirmations: 0 });
      showRelays();
      $("deposit-amount").value = "";
      poll();
    } catch (e) {
      say("deposit-error", walletError(e));
    } finally {
      btn.disabled = false;
    }
  });

  async function ownerCall(method, amount) {
    say("withdraw-error", "");
    try {
      const from = await account();
      const call = await post("withdrawal/call", { method, amount: amount || "" });
      if (call.from.toLowerCase() !== from.toLowerCase()) {
        throw new Error("Only the wallet that owns this balance (" + call.from + ") can do this; your wallet is " + from + ".");
      }
      await window.ethereum.request({ method: "eth_sendTransaction", params: [{ from, to: call.to, data: call.data }] });
      say("withdrawal-state", "Sent from your wallet; waiting for the network…");
      poll();
    } catch (e) {
      say("withdraw-error", walletError(e));
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
      return;
    }
    const left = withdrawal.availableAt - (Date.now() / 1000 + clockSkew);
    if (left <= 0) {
      el.textContent = "Due now: withdraw it.";
      return;
    }
    const s = Math.floor(left);
    const d = Math.floor(s / 86400), h = Math.floor((s % 86400) / 3600), m = Math.floor((s % 3600) / 60);
    el.textContent = "Available in " + (d ? d + "d " : "") + String(h).padStart(2, "0") + ":" + String(m).padStart(2, "0") + ":" + String(s % 60).padStart(2, "0");
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
        body.dataset.withdrawalPending = String(withdrawal.pending);
        const ws = $("withdrawal-state");
        if (ws) {
          ws.textContent = withdrawal.pending
            ? usd(withdrawal.pending) + " under notice, available " + new Date(withdrawal.availableAt * 1000).toUTCString() + "."
            : "No withdrawal under notice.";
        }
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
      for (const r of st.relays || []) relays.set(r.txHash, r);
      showRelays();
      countdown();
    } catch (e) {
      // The next poll tries again.
    } finally {
      polling = false;
    }
  }
  poll();
  setInterval(poll, 1500);
  setInterval(countdown, 1000);
})();
