// Verifies one settleflow webhook delivery with the standardwebhooks library.
// Reads {"body": "<base64 of the raw body>", "headers": {...}, "secret": "whsec_..."}
// on stdin; exits 0 if the delivery verifies, 1 (with the reason on stderr) if not.
import { Webhook } from "standardwebhooks";

let input = "";
process.stdin.setEncoding("utf8");
for await (const chunk of process.stdin) input += chunk;

try {
  const { body, headers, secret } = JSON.parse(input);
  const payload = Buffer.from(body, "base64");
  const event = new Webhook(secret).verify(payload, headers);
  if (event.id !== headers["webhook-id"]) {
    throw new Error(`event id ${event.id} is not webhook-id ${headers["webhook-id"]}`);
  }
  console.log(`verified ${event.id} (${event.type})`);
  process.exit(0);
} catch (err) {
  console.error(`not verified: ${err.message}`);
  process.exit(1);
}
