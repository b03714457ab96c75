// Package settlement is settleflow's [settleflow.Settler] and
// [settleflow.Funds] on go-ethereum: each workflow's charge is debited from
// its customer's prepaid balance, in a 6-decimal USD stablecoin, in the
// SettleflowSettlement contract (contracts/src) on a public chain; refunds
// give charges back to those balances; deposits and withdrawals are
// followed from the contract's events.
//
// # Chains
//
// Live settles on a mainnet, test on a testnet. [New] connects one chain per
// configured environment over JSON-RPC and, on start, refuses a chain of the
// wrong kind: a known mainnet id (1, 10, 137, 8453, 42161) for test and a known
// testnet id (11155111, 84532, 1337, 17000, 80002, 421614, 11155420) for live,
// besides any chain id other than the configured one. A charge for an
// environment that is not configured fails at once with the permanent failure
// code "livemode_not_configured". With no test chain configured, test mode
// runs on go-ethereum's in-process simulated chain ([NewSimulated]), with the
// token and the contract deployed at start and a test faucet (an account of
// its own, holding test tokens) that funds test customers. With SimulatedOptions.DataDir (the reference server uses DATA/chain)
// that chain is kept on disk, so a restart continues it and every earlier
// transaction hash stays valid; without, it lives in memory only and a restart
// begins an empty chain.
//
// # Customers' balances
//
// Each customer has a balance in the contract, keyed by its reference:
// HMAC-SHA256 of the environment and customer id under the deployment's
// secret ([ChainConfig.CustomerRefSecret], [CustomerRef]), so ids are not
// published and cannot be guessed from the chain. Anyone deposits for a
// customer, with approve and deposit, or with one signed EIP-3009
// receiveWithAuthorization (USDC implements it; its nonce is
// keccak256(ref, owner, salt), so a relayer cannot redirect the deposit,
// and no approval is left behind, unlike EIP-2612 permit). A deposit names
// the owner the contract records (zero while none) or reverts: it never makes
// anyone the owner. The owner, the only address that can withdraw, is set by
// the operator with the owner's EIP-712 signature of an OwnerGrant
// ([Settler.SetOwner]); a lost key is replaced the same way, after the
// withdrawal notice unless the owner cancels it. The owner withdraws with
// requestWithdrawal, then withdraw after the notice period fixed at
// deployment (default 24 h). Amounts are whole cents: with a 6-decimal token
// one cent is 10,000 base units.
//
// # Settling
//
// settle(customers, charges) takes the batch's customers (ascending, each
// once) and one word per charge: its amount in cents, the index of its
// customer, its sequence ([settleflow.Charge.Sequence]: dense per
// environment from 1, never reused) and a 48-bit tag of its workflow id
// ([WorkflowTag]). Each new sequence is recorded once in a bitmap (bit
// seq&255 of word seq>>8: one new storage slot per 256 workflows) and
// debited from its customer; one its customer cannot cover is recorded as
// declined (ChargeDeclined; its workflow fails with insufficient_funds,
// nothing charged); a sequence recorded before is skipped (AlreadySettled).
// None reverts the batch, so a resubmission after any loss of memory, a
// resent dropped transaction or a replacement cannot charge twice. What the
// payee earned is owed to it in the contract and claimed in one transfer
// whenever it likes: a batch moves no tokens. The contract holds exactly its
// customers' balances plus what the payee is owed.
//
// The debits of each bitmap word are committed to by a hash chain beside
// it, one run of debits per settle, so a refund can prove its charge
// without a storage slot per batch: refund(word, …) resends the word's
// debits as the settles made them, and the contract checks them against
// the commitment, bounds the refunds of each charge by the charge, applies
// each refund key (the refund id) once, and pays it from what the payee is
// owed. Nothing per charge is emitted: a settle is read back from its
// calldata and its receipt's events (WordSettled indexes the word).
//
// # Submit and Status
//
// Submit validates the charges and queues them in memory for the next
// batch, which is flushed when it is full or its oldest charge has waited
// FlushInterval. A queue in memory can be lost (a crash before the batch is
// sent): this is safe only because the engine asks Status again, gets
// [settleflow.SettlementUnknown] for a charge the settler has no record of,
// and submits it again. Before answering Unknown, Status looks on chain (the
// contract's settled and declined views, then the word's WordSettled events
// and the settles' calldata, from the contract's deployment block; see
// [ChainConfig.LogRange] for nodes that limit log queries), so a restart
// with an empty memory still finds every charge that landed. Refunds
// (SubmitRefunds, RefundStatus) work the same way, keyed by refund id.
//
// One goroutine per chain owns the hot account: it assigns nonces in order
// (however many goroutines call Submit), prices EIP-1559 fees from the head's
// base fee and the node's tip, replaces a transaction that is not mined after
// StuckAfter with a fee bump of at least 12.5 %, rebroadcasts a transaction
// the node no longer knows (dropped, or removed by a reorg), re-checks each
// receipt's block against the canonical chain until the configured depth (by
// default the "finalized" block) is reached, and only then reports the charge
// Confirmed.
package settlement
