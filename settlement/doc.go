// Package settlement is settleflow's [settleflow.Settler] on go-ethereum: it
// settles each workflow's quoted charge in a 6-decimal USD stablecoin on a
// public chain, through the SettleflowSettlement contract in contracts/src.
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
// token and the contract deployed at start and the operator funded and
// approved. With SimulatedOptions.DataDir (the reference server uses DATA/chain)
// that chain is kept on disk, so a restart continues it and every earlier
// transaction hash stays valid; without, it lives in memory only and a restart
// begins an empty chain.
//
// # On chain
//
// The contract records each workflow once, as one bit keyed by its sequence
// ([settleflow.Charge.Sequence]: dense per environment from 1, assigned
// durably before the charge is first submitted, never reused): bit seq&255 of the storage word
// seq>>8, so a batch of consecutive sequences writes about one new storage
// slot per 256 workflows. Each charge emits Settled(workflowId, sequence,
// customerRef, amount), all but the amount indexed, so settlements stay
// auditable by workflow id (the id's ASCII bytes, at most 32), sequence and
// customer; customerRef is keccak256 of the customer id, so no customer id is
// written in clear on a public chain. A batch moves the sum of its new
// charges from the operator to the payee in one transferFrom; a sequence that
// is already recorded is skipped (AlreadySettled), never charged again and
// never reverts the batch, so a resubmission after any loss of memory, a
// resent dropped transaction or a replacement cannot charge twice. A charge
// with sequence 0 is refused ("invalid_charge"), and so is one whose sequence
// another workflow holds (in memory, or on chain, where it would be skipped
// and never charged). Amounts are minor units (cents); with a 6-decimal token
// one cent is 10,000 base units, converted in integers.
//
// # Submit and Status
//
// Submit validates the charges, checks that the operator's balance and
// allowance cover them (an unreachable RPC is a plain, transient error;
// insufficient funds or allowance is a permanent Failure) and queues them in
// memory for the next batch, which is flushed when it is full or its oldest
// charge has waited FlushInterval. A queue in memory can be lost (a crash
// before the batch is sent): this is safe only because the engine asks Status
// again, gets [settleflow.SettlementUnknown] for a charge the settler has no
// record of, and submits it again. Before answering Unknown, Status looks on
// chain (the contract's settled(sequence) view, then the Settled event found
// by its indexed sequence, from the contract's deployment block; see
// [ChainConfig.LogRange] for nodes that limit log queries), so a restart with
// an empty memory still finds every charge that landed. Status never
// waits: it answers from memory and, for unknown charges, with a few reads.
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
