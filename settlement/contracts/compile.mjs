// Compiles src/*.sol with the solc pinned in package.json (solcjs) and writes
// build/<Contract>.abi and build/<Contract>.bin (and, for the x402 upto
// proxy, build/UptoPermit2Proxy.runtime: the code test chains place at the
// scheme's address in their genesis). It also writes build/Permit2.runtime:
// Uniswap's Permit2 as deployed at 0x000000000022D473030F116dDEE9F6B43aC78BA3
// (solc 0.8.17), taken from the pinned @uniswap/v4-periphery package, whose
// DeployPermit2 test script carries that runtime code to etch it there.
// Run through ./gen.sh.
import fs from 'node:fs';
import path from 'node:path';
import solc from 'solc';

const contracts = ['SettleflowSettlement', 'TestUSD', 'UptoPermit2Proxy'];
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
    outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object', 'evm.deployedBytecode.object'] } },
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
  if (name === 'UptoPermit2Proxy') {
    fs.writeFileSync(path.join('build', `${name}.runtime`), c.evm.deployedBytecode.object + '\n');
  }
}

// Permit2's runtime code: DeployPermit2 copies 0x23c0 bytes from offset
// 0x1e4 of its own code and etches them at Permit2's address.
const deployer = JSON.parse(fs.readFileSync('node_modules/@uniswap/v4-periphery/foundry-out/DeployPermit2.sol/DeployPermit2.json', 'utf8'));
const code = deployer.deployedBytecode.object.slice(2);
const permit2 = code.slice(0x1e4 * 2, (0x1e4 + 0x23c0) * 2);
if (!permit2.startsWith('60406080815260049081361015') || !permit2.endsWith('a164736f6c6343000811000a')) {
  console.error('@uniswap/v4-periphery: DeployPermit2 no longer carries Permit2 (solc 0.8.17) where expected');
  process.exit(1);
}
fs.writeFileSync(path.join('build', 'Permit2.runtime'), permit2 + '\n');
console.log(`solc ${solc.version()}: compiled ${contracts.join(', ')}`);
