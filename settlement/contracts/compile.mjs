// Compiles src/*.sol with the solc pinned in package.json (solcjs) and writes
// build/<Contract>.abi and build/<Contract>.bin. Run through ./gen.sh.
import fs from 'node:fs';
import path from 'node:path';
import solc from 'solc';

const contracts = ['SettleflowSettlement', 'TestUSD'];
const sources = {};
for (const name of contracts) {
  sources[`${name}.sol`] = { content: fs.readFileSync(path.join('src', `${name}.sol`), 'utf8') };
}
const input = {
  language: 'Solidity',
  sources,
  settings: {
    evmVersion: 'cancun',
    viaIR: true,
    optimizer: { enabled: true, runs: 10000 },
    metadata: { bytecodeHash: 'none' },
    outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } },
  },
};
const out = JSON.parse(solc.compile(JSON.stringify(input)));
let failed = false;
for (const e of out.errors ?? []) {
  console.error(e.formattedMessage);
  if (e.severity === 'error') failed = true;
}
if (failed) process.exit(1);
fs.mkdirSync('build', { recursive: true });
for (const name of contracts) {
  const c = out.contracts[`${name}.sol`][name];
  fs.writeFileSync(path.join('build', `${name}.abi`), JSON.stringify(c.abi, null, 2) + '\n');
  fs.writeFileSync(path.join('build', `${name}.bin`), c.evm.bytecode.object + '\n');
}
console.log(`solc ${solc.version()}: compiled ${contracts.join(', ')}`);
