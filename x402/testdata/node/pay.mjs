// Pays a settleflow x402 create with the official x402 client packages
// (@x402/fetch, @x402/evm, unmodified, pinned in package-lock.json) and
// prints what came back as one JSON line. The client takes the scheme the
// 402 offers: exact (EIP-3009) for a fixed price, upto (Permit2) for an
// outcome-priced product. Driven by x402's Go tests
// (TestOfficialClientPaysExact, TestOfficialClientPaysUpto); configured by
// the environment:
//
//   X402_URL      the create's URL (POST)
//   X402_KEY      the paying wallet's private key, 0x-hex
//   X402_NETWORK  the CAIP-2 network registered for both schemes
//   X402_ASSET    the token the spend controls allow (a non-default asset)
//   X402_MAX      the most one payment may cost, in the token's base units
//   X402_BODY     the create's JSON body
import { wrapFetchWithPaymentFromConfig, decodePaymentResponseHeader } from "@x402/fetch";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { UptoEvmScheme } from "@x402/evm/upto/client";
import { privateKeyToAccount } from "viem/accounts";

const env = (name) => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
};
const network = env("X402_NETWORK");
const account = privateKeyToAccount(env("X402_KEY"));
const pay = wrapFetchWithPaymentFromConfig(fetch, {
  schemes: [
    { network, client: new ExactEvmScheme(account) },
    { network, client: new UptoEvmScheme(account) },
  ],
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
