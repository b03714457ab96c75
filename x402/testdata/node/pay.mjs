// Pays a settleflow x402 create with the official x402 client packages
// (@x402/fetch, @x402/evm, unmodified, pinned in package-lock.json) and
// prints what came back as one JSON line. Driven by x402's Go tests
// (TestOfficialClientPaysExact); configured by the environment:
//
//   X402_URL      the create's URL (POST)
//   X402_KEY      the paying wallet's private key, 0x-hex
//   X402_NETWORK  the CAIP-2 network registered for the exact scheme
//   X402_ASSET    the token the spend controls allow (a non-default asset)
//   X402_MAX      the most one payment may cost, in the token's base units
//   X402_BODY     the create's JSON body
import { wrapFetchWithPaymentFromConfig, decodePaymentResponseHeader } from "@x402/fetch";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { privateKeyToAccount } from "viem/accounts";

const env = (name) => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
};
const network = env("X402_NETWORK");
const account = privateKeyToAccount(env("X402_KEY"));
const pay = wrapFetchWithPaymentFromConfig(fetch, {
  schemes: [{ network, client: new ExactEvmScheme(account) }],
  spendControls: { allowedAssets: [{ network, asset: env("X402_ASSET"), maxAmountPerPayment: env("X402_MAX") }] },
});
const res = await pay(env("X402_URL"), {
  method: "POST",
  headers: { "Content-Type": "application/json" },
  body: env("X402_BODY"),
});
const header = res.headers.get("PAYMENT-RESPONSE");
console.log(JSON.stringify({
  status: res.status,
  paymentResponse: header ? decodePaymentResponseHeader(header) : null,
  body: await res.json(),
}));
