// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

/// @dev The calls the settlement contract makes into the token.
interface IERC20 {
    function transfer(address to, uint256 value) external returns (bool);
    function transferFrom(address from, address to, uint256 value) external returns (bool);
}

/// @dev EIP-3009's receiving path (USDC implements it): the payer signs a
/// transfer to this contract, which alone can execute it.
interface IERC3009 {
    function receiveWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) external;
}

/// @title Settleflow settlement, version 4: customers pay from prepaid balances
/// @notice Each customer has a balance here, keyed by a customer reference
/// (derived off chain from the customer id with a secret of the deployment,
/// so it does not reveal the id). Anyone can deposit for a customer. A
/// balance's owner, the only address that can withdraw (after a notice
/// period fixed at deployment), is never named by a deposit: the operator
/// sets it (`setOwner`) with the owner's own EIP-712 signature of an
/// OwnerGrant (the customer reference, the address, a one-time nonce, the
/// origin it was signed on and a deadline), which proves the address is
/// controlled by whoever the operator vouches for. A nonce is used once per
/// signer (version 4: version 3 kept one set of nonces for every signer, so
/// an owner could spend another customer's pending grant's nonce first). A deposit names the owner
/// it expects (zero while none is set) and reverts if that is not the
/// recorded one, so no deposit can be credited to a balance someone else
/// controls. An owner moves to a new address of its own at once
/// (`changeOwner`); a lost key is replaced by the operator's proposal, which
/// takes effect only after the withdrawal notice and which the current owner
/// can cancel (`cancelOwnerChange`). Any owner change restarts the notice
/// of a pending withdrawal request (version 4), so a new owner never finds
/// a request already due.
///
/// `settle` debits each charge from its customer's balance and records it
/// once by its sequence (dense per environment, from 1) in a bitmap: a
/// sequence already recorded is skipped (AlreadySettled), a charge its
/// customer cannot cover is recorded as declined (ChargeDeclined) and
/// debits nothing; neither reverts the batch. What the payee earned is owed
/// to it here and claimed in one transfer whenever it likes (`claim`), so a
/// batch makes no token transfer at all.
///
/// `refund` gives part or all of a settled charge back to its customer's
/// balance, from what is owed to the payee. The debited charges of each
/// bitmap word are committed to by one hash chain, kept beside the bitmap
/// (a new storage slot per 256 sequences, not one per batch): every run of
/// debits a batch makes in a word extends it with the hash of the run's
/// (charge, customer) pairs. A refund proves its charge by resending the
/// word's runs, as the settle transactions sent them; the contract keeps
/// what was refunded of each charge and never lets it pass the charge, and
/// applies each refund key once.
///
/// Invariant: token.balanceOf(this) == Σ balanceOf[ref] + payeeOwed.
///
/// A charge, packed in one word: bits 0-95 the amount in cents (the
/// contract's `unit` is the token's base units per cent), 96-111 the index
/// of its customer in the batch's customer list, 112-175 its sequence,
/// 176-223 a tag of its workflow (the high 48 bits of keccak256 of the
/// workflow id), so the chain names the workflow a sequence was settled for
/// without publishing the id; bits 224-255 must be zero (settle reverts
/// otherwise).
contract SettleflowSettlement {
    /// @notice The contract's version: what `chain status` reports.
    uint256 public constant version = 4;

    /// @notice The stablecoin customers pay in.
    IERC20 public immutable token;
    /// @notice Who earns every charge. Fixed at deployment.
    address public immutable payee;
    /// @notice Who may change the operator.
    address public immutable owner;
    /// @notice Base units of the token per cent: amounts are whole cents.
    uint256 public immutable unit;
    /// @notice Seconds between a withdrawal request and the withdrawal.
    uint256 public immutable withdrawalNotice;
    /// @notice The block the contract was deployed in: no event is older.
    uint256 public immutable deployedAt;
    /// @notice The account that settles and refunds.
    address public operator;

    /// @notice Each customer's balance, in base units of the token.
    mapping(bytes32 ref => uint256 amount) public balanceOf;

    /// @dev A customer's owner, its withdrawal under notice, and an owner
    /// change the operator proposed (nextOwner, effective at ownerChangeAt).
    struct Account {
        address owner;
        uint64 availableAt;
        uint256 pending;
        address nextOwner;
        uint64 ownerChangeAt;
    }

    mapping(bytes32 ref => Account) internal accounts;

    /// @notice The OwnerGrant nonces each signer (the owner a grant names)
    /// used: each grant sets an owner once. Keyed by signer, so no one can
    /// spend a nonce of another address's grant.
    mapping(address signer => mapping(bytes32 nonce => bool used)) public grantUsed;

    /// @notice EIP-712: the type of the grant an owner signs.
    bytes32 public constant OWNER_GRANT_TYPEHASH =
        keccak256("OwnerGrant(bytes32 customerRef,address owner,bytes32 nonce,string origin,uint256 deadline)");
    bytes32 private constant DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");
    bytes32 private immutable domainSeparator;
    uint256 private immutable domainChainId;

    /// @notice The settlement bitmap: bit (sequence & 255) of word
    /// (sequence >> 8) is set once that sequence is recorded (debited or
    /// declined).
    mapping(uint256 word => uint256 bits) public settledWords;
    /// @notice The declined bitmap: set for a recorded sequence whose
    /// customer could not cover it (nothing was debited).
    mapping(uint256 word => uint256 bits) public declinedWords;
    /// @notice Each bitmap word's commitment: the hash chain of the runs of
    /// debited charges with sequences in the word, in the order debited.
    mapping(uint256 word => bytes32 chain) public wordCommit;
    /// @notice What was refunded of each charge, in base units.
    mapping(uint256 sequence => uint256 amount) public refundedOf;
    /// @notice Each refund key's outcome: 0 not decided (never seen, or only
    /// rejected while the payee was owed too little), 1 applied, 2 rejected
    /// for good (it would pass the charge).
    mapping(bytes32 key => uint256 state) public refundState;

    /// @notice What the payee has earned and not claimed, in base units.
    uint256 public payeeOwed;

    /// @notice A balance's owner was set or changed (every path emits it).
    event OwnerSet(bytes32 indexed customerRef, address indexed owner);
    /// @notice The operator proposed a new owner for a balance that has
    /// one: it takes effect at effectiveAt unless the owner cancels it.
    event OwnerChangeProposed(bytes32 indexed customerRef, address indexed next, uint256 effectiveAt);
    /// @notice A proposed owner change was canceled.
    event OwnerChangeCanceled(bytes32 indexed customerRef, address indexed next);
    event Deposited(bytes32 indexed customerRef, address indexed from, uint256 amount, uint256 balance);
    event WithdrawalRequested(bytes32 indexed customerRef, uint256 amount, uint256 availableAt);
    event WithdrawalCanceled(bytes32 indexed customerRef);
    event Withdrawn(bytes32 indexed customerRef, address indexed to, uint256 amount);
    /// @notice A settle debited a run of charges whose sequences fall in
    /// this bitmap word (extending its commitment): the index from a
    /// sequence to the transactions that debited it.
    event WordSettled(uint256 indexed word);
    /// @notice A charge whose sequence was already recorded was skipped.
    event AlreadySettled(uint256 indexed sequence);
    /// @notice A charge its customer's balance could not cover: recorded,
    /// nothing debited.
    event ChargeDeclined(uint256 indexed sequence, bytes32 indexed customerRef, uint256 amount, uint256 balance);
    event Refunded(bytes32 indexed key, uint256 indexed sequence, bytes32 indexed customerRef, uint256 amount);
    /// @notice A refund that cannot be applied; reason 1: it would pass
    /// the charge (final for its key), 2: the payee is owed less than it
    /// (not final: the key can be sent again once the payee is owed enough).
    event RefundRejected(bytes32 indexed key, uint256 indexed sequence, uint256 reason);
    /// @notice A refund key already decided was sent again: nothing done.
    event RefundSkipped(bytes32 indexed key);
    event Claimed(address indexed payee, uint256 amount);
    event PayeeFunded(address indexed from, uint256 amount);
    event OperatorChanged(address indexed previous, address indexed next);

    error NotOperator();
    error NotOwner();
    error NotCustomerOwner();
    error NotPayee();
    error ZeroAddress();
    error ZeroCustomer();
    error ZeroSequence();
    error ZeroKey();
    error CustomersNotSorted();
    error BadCustomerIndex();
    error BadChargeIndex();
    error BadAmount();
    error StaleCommitment();
    error ChargeNotInWord();
    error LengthMismatch();
    error NoWithdrawalPending();
    error WithdrawalNotYetAvailable(uint256 availableAt);
    error TransferFailed();
    error BadCharge();
    error OwnerMismatch(address recorded);
    error OwnerUnchanged();
    error GrantExpired();
    error GrantUsed();
    error BadSignature();
    error NoOwnerChange();
    error OwnerChangeNotYetDue(uint256 effectiveAt);

    uint256 private constant AMOUNT_MASK = (1 << 96) - 1;
    uint256 private constant CHARGE_MASK = (1 << 240) - 1;

    constructor(IERC20 token_, address payee_, address operator_, uint256 unit_, uint256 withdrawalNotice_) {
        if (address(token_) == address(0) || payee_ == address(0) || operator_ == address(0)) {
            revert ZeroAddress();
        }
        // unit below 2^128 keeps amount (< 2^96 cents) × unit below 2^224:
        // settle multiplies unchecked.
        if (unit_ == 0 || unit_ > type(uint128).max) revert BadAmount();
        token = token_;
        payee = payee_;
        owner = msg.sender;
        operator = operator_;
        unit = unit_;
        withdrawalNotice = withdrawalNotice_;
        deployedAt = block.number;
        domainChainId = block.chainid;
        domainSeparator = _domainSeparator();
        emit OperatorChanged(address(0), operator_);
    }

    // ---- views ----

    /// @notice Whether a sequence is recorded (debited or declined).
    function settled(uint256 sequence) external view returns (bool) {
        return (settledWords[sequence >> 8] >> (sequence & 255)) & 1 != 0;
    }

    /// @notice Whether a recorded sequence was declined (nothing debited).
    function declined(uint256 sequence) external view returns (bool) {
        return (declinedWords[sequence >> 8] >> (sequence & 255)) & 1 != 0;
    }

    /// @notice A customer's owner, balance and withdrawal under notice.
    function account(bytes32 ref)
        external
        view
        returns (address owner_, uint256 balance, uint256 pending, uint256 availableAt)
    {
        Account storage a = accounts[ref];
        return (a.owner, balanceOf[ref], a.pending, a.availableAt);
    }

    /// @notice The owner change proposed for a customer, if any.
    function ownerChange(bytes32 ref) external view returns (address next, uint256 effectiveAt) {
        Account storage a = accounts[ref];
        return (a.nextOwner, a.ownerChangeAt);
    }

    /// @notice The EIP-712 domain separator of OwnerGrant signatures.
    function DOMAIN_SEPARATOR() public view returns (bytes32) {
        return block.chainid == domainChainId ? domainSeparator : _domainSeparator();
    }

    function _domainSeparator() private view returns (bytes32) {
        return keccak256(
            abi.encode(DOMAIN_TYPEHASH, keccak256("SettleflowSettlement"), keccak256("4"), block.chainid, address(this))
        );
    }

    // ---- owners ----

    /// @notice The operator sets a customer's owner, with the owner's
    /// signature of an OwnerGrant. A customer with no owner gets it at once;
    /// one with an owner gets a proposal that takes effect after the
    /// withdrawal notice (`completeOwnerChange`) unless its owner cancels it:
    /// the way back from a lost key that an attacker holding the operator's
    /// key cannot use without the owner's notice.
    function setOwner(
        bytes32 ref,
        address owner_,
        bytes32 nonce,
        string calldata origin,
        uint256 deadline,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) external {
        if (msg.sender != operator) revert NotOperator();
        _checkGrant(ref, owner_, nonce, origin, deadline, v, r, s);
        Account storage a = accounts[ref];
        address current = a.owner;
        if (current == owner_) revert OwnerUnchanged();
        if (current == address(0)) {
            a.owner = owner_;
            emit OwnerSet(ref, owner_);
            return;
        }
        uint256 at = block.timestamp + withdrawalNotice;
        a.nextOwner = owner_;
        a.ownerChangeAt = uint64(at);
        emit OwnerChangeProposed(ref, owner_, at);
    }

    /// @notice The owner moves its balance to another address of its own,
    /// at once, with that address's signature of an OwnerGrant. Any
    /// proposed change is dropped; a pending withdrawal request's notice
    /// starts again.
    function changeOwner(
        bytes32 ref,
        address next,
        bytes32 nonce,
        string calldata origin,
        uint256 deadline,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) external {
        Account storage a = accounts[ref];
        if (msg.sender != a.owner || a.owner == address(0)) revert NotCustomerOwner();
        if (next == a.owner) revert OwnerUnchanged();
        _checkGrant(ref, next, nonce, origin, deadline, v, r, s);
        _dropOwnerChange(a, ref);
        _newOwner(a, ref, next);
    }

    /// @notice The owner (or the operator) cancels a proposed owner change.
    function cancelOwnerChange(bytes32 ref) external {
        Account storage a = accounts[ref];
        if (msg.sender != operator && (msg.sender != a.owner || a.owner == address(0))) revert NotCustomerOwner();
        if (a.nextOwner == address(0)) revert NoOwnerChange();
        _dropOwnerChange(a, ref);
    }

    /// @notice Applies a proposed owner change once it is due (anyone may);
    /// a pending withdrawal request's notice starts again.
    function completeOwnerChange(bytes32 ref) external {
        Account storage a = accounts[ref];
        address next = a.nextOwner;
        if (next == address(0)) revert NoOwnerChange();
        if (block.timestamp < a.ownerChangeAt) revert OwnerChangeNotYetDue(a.ownerChangeAt);
        a.nextOwner = address(0);
        a.ownerChangeAt = 0;
        _newOwner(a, ref, next);
    }

    /// @dev Makes next the owner of a balance that has one. A withdrawal
    /// request under notice is kept, but its notice starts again
    /// (WithdrawalRequested anew): the new owner cannot take at once what
    /// the old one asked for, and the balance cannot leave before charges
    /// admitted under the new owner are settled.
    function _newOwner(Account storage a, bytes32 ref, address next) private {
        a.owner = next;
        emit OwnerSet(ref, next);
        uint256 pending = a.pending;
        if (pending == 0) return;
        uint256 at = block.timestamp + withdrawalNotice;
        a.availableAt = uint64(at);
        emit WithdrawalRequested(ref, pending, at);
    }

    function _dropOwnerChange(Account storage a, bytes32 ref) private {
        address next = a.nextOwner;
        if (next == address(0)) return;
        a.nextOwner = address(0);
        a.ownerChangeAt = 0;
        emit OwnerChangeCanceled(ref, next);
    }

    /// @dev Checks an OwnerGrant: not expired, its nonce unused by owner_
    /// (then used),
    /// signed by owner_ under this contract's EIP-712 domain (a signature
    /// for another chain or contract does not verify), s in the lower half.
    function _checkGrant(
        bytes32 ref,
        address owner_,
        bytes32 nonce,
        string calldata origin,
        uint256 deadline,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) private {
        if (ref == bytes32(0)) revert ZeroCustomer();
        if (owner_ == address(0)) revert ZeroAddress();
        if (block.timestamp > deadline) revert GrantExpired();
        mapping(bytes32 => bool) storage used = grantUsed[owner_];
        if (used[nonce]) revert GrantUsed();
        used[nonce] = true;
        if (uint256(s) > 0x7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5D576E7357A4501DDFE92F46681B20A0) revert BadSignature();
        bytes32 digest = keccak256(
            abi.encodePacked(
                "\x19\x01",
                DOMAIN_SEPARATOR(),
                keccak256(abi.encode(OWNER_GRANT_TYPEHASH, ref, owner_, nonce, keccak256(bytes(origin)), deadline))
            )
        );
        address signer = ecrecover(digest, v, r, s);
        if (signer == address(0) || signer != owner_) revert BadSignature();
    }

    // ---- deposits ----

    /// @notice Deposits amount for a customer from the caller's tokens
    /// (after approve). owner_ is the owner the depositor expects: the
    /// recorded one (zero while the customer has none), else it reverts.
    function deposit(bytes32 ref, address owner_, uint256 amount) external {
        _pull(msg.sender, amount);
        _credit(ref, owner_, msg.sender, amount);
    }

    /// @notice Deposits with one signature and no approval: `from` signed an
    /// EIP-3009 ReceiveWithAuthorization of amount to this contract whose
    /// nonce is keccak256(abi.encode(ref, owner_, salt)), so whoever relays
    /// it cannot credit another customer or name another owner.
    function depositWithAuthorization(
        bytes32 ref,
        address owner_,
        address from,
        uint256 amount,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 salt,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) external {
        bytes32 nonce = keccak256(abi.encode(ref, owner_, salt));
        IERC3009(address(token)).receiveWithAuthorization(
            from, address(this), amount, validAfter, validBefore, nonce, v, r, s
        );
        _credit(ref, owner_, from, amount);
    }

    function _credit(bytes32 ref, address owner_, address from, uint256 amount) private {
        if (ref == bytes32(0)) revert ZeroCustomer();
        if (amount == 0 || amount % unit != 0) revert BadAmount();
        address recorded = accounts[ref].owner;
        if (owner_ != recorded) revert OwnerMismatch(recorded);
        uint256 balance = balanceOf[ref] + amount;
        balanceOf[ref] = balance;
        emit Deposited(ref, from, amount, balance);
    }

    // ---- withdrawals ----

    /// @notice The owner puts amount under notice (replacing any earlier
    /// request), at most the balance (a larger request is clamped to it); it
    /// can be withdrawn withdrawalNotice seconds later.
    function requestWithdrawal(bytes32 ref, uint256 amount) external {
        Account storage a = accounts[ref];
        if (msg.sender != a.owner || a.owner == address(0)) revert NotCustomerOwner();
        if (amount % unit != 0) revert BadAmount();
        uint256 balance = balanceOf[ref];
        if (amount > balance) amount = balance;
        if (amount == 0) revert BadAmount();
        uint256 at = block.timestamp + withdrawalNotice;
        a.pending = amount;
        a.availableAt = uint64(at);
        emit WithdrawalRequested(ref, amount, at);
    }

    /// @notice The owner cancels its pending request.
    function cancelWithdrawal(bytes32 ref) external {
        Account storage a = accounts[ref];
        if (msg.sender != a.owner || a.owner == address(0)) revert NotCustomerOwner();
        if (a.pending == 0) revert NoWithdrawalPending();
        a.pending = 0;
        a.availableAt = 0;
        emit WithdrawalCanceled(ref);
    }

    /// @notice After the notice, sends the owner what it asked for, or the
    /// whole balance if charges admitted before the request left less.
    function withdraw(bytes32 ref) external returns (uint256 amount) {
        Account storage a = accounts[ref];
        address to = a.owner;
        if (msg.sender != to || to == address(0)) revert NotCustomerOwner();
        uint256 pending = a.pending;
        if (pending == 0) revert NoWithdrawalPending();
        if (block.timestamp < a.availableAt) revert WithdrawalNotYetAvailable(a.availableAt);
        uint256 balance = balanceOf[ref];
        amount = pending < balance ? pending : balance;
        balanceOf[ref] = balance - amount;
        a.pending = 0;
        a.availableAt = 0;
        emit Withdrawn(ref, to, amount);
        if (amount != 0) _push(to, amount);
    }

    // ---- settlement ----

    /// @notice Replaces the operator (key rotation). Records stay.
    function setOperator(address next) external {
        if (msg.sender != owner) revert NotOwner();
        if (next == address(0)) revert ZeroAddress();
        emit OperatorChanged(operator, next);
        operator = next;
    }

    /// @notice Settles a batch: each charge whose sequence is new is debited
    /// from its customer's balance (or declined if the balance cannot cover
    /// it) and recorded; the others are skipped. customers must be strictly
    /// ascending (each customer once); charges should be in sequence order,
    /// so that consecutive sequences share a bitmap word, read and written
    /// once per run. The debited total is owed to the payee.
    /// @return total the amount debited, in base units
    function settle(bytes32[] calldata customers, uint256[] calldata charges) external returns (uint256 total) {
        if (msg.sender != operator) revert NotOperator();
        uint256[] memory bal = _balances(customers);
        // The current run's debited (charge, customer) pairs, hashed into
        // the word's commitment when the run ends.
        bytes memory run = new bytes(charges.length * 64);
        uint256 n;
        // The word being updated, kept in memory: no sequence below 2^64
        // maps to word type(uint256).max, so it means "none loaded".
        uint256 wordIndex = type(uint256).max;
        uint256 word;
        bool dirty;
        // Every charge's bits 224-255 must be zero: OR-ed together here and
        // checked once after the loop (a revert undoes the whole batch).
        uint256 high;
        for (uint256 i; i < charges.length; ) {
            uint256 c;
            // i < charges.length: no bounds check needed.
            assembly ("memory-safe") {
                c := calldataload(add(charges.offset, shl(5, i)))
            }
            high |= c;
            uint256 seq = uint64(c >> 112);
            if (seq == 0) revert ZeroSequence();
            uint256 w = seq >> 8;
            if (w != wordIndex) {
                _closeRun(wordIndex, word, dirty, run, n);
                n = 0;
                dirty = false;
                wordIndex = w;
                word = settledWords[w];
            }
            uint256 bit = uint256(1) << (seq & 255);
            if (word & bit != 0) {
                emit AlreadySettled(seq);
            } else {
                word |= bit;
                dirty = true;
                (bool ok, uint256 amount, bytes32 ref) = _debit(bal, c, customers);
                if (ok) {
                    assembly ("memory-safe") {
                        let p := add(add(run, 32), shl(6, n))
                        mstore(p, c)
                        mstore(add(p, 32), ref)
                    }
                    // total ≤ Σ the batch's balances ≤ the tokens held.
                    unchecked {
                        ++n;
                        total += amount;
                    }
                }
            }
            unchecked {
                ++i;
            }
        }
        _closeRun(wordIndex, word, dirty, run, n);
        if (high >> 224 != 0) revert BadCharge();
        if (total == 0) return 0;
        for (uint256 i; i < bal.length; ) {
            balanceOf[customers[i]] = bal[i];
            unchecked {
                ++i;
            }
        }
        payeeOwed += total;
    }

    /// @dev Ends a run of charges in one bitmap word: writes the word if it
    /// changed and, if the run debited charges, extends the word's
    /// commitment with the hash of their (charge, customer) pairs.
    function _closeRun(uint256 wordIndex, uint256 word, bool dirty, bytes memory run, uint256 n) private {
        if (dirty) settledWords[wordIndex] = word;
        if (n == 0) return;
        bytes32 h;
        assembly ("memory-safe") {
            h := keccak256(add(run, 32), shl(6, n))
        }
        bytes32 next = keccak256(abi.encodePacked(wordCommit[wordIndex], h));
        wordCommit[wordIndex] = next;
        emit WordSettled(wordIndex);
    }

    /// @dev Debits a new charge from its customer's balance in bal, or
    /// records it as declined if the balance cannot cover it.
    function _debit(uint256[] memory bal, uint256 c, bytes32[] calldata customers)
        private
        returns (bool ok, uint256 amount, bytes32 ref)
    {
        uint256 idx = uint16(c >> 96);
        if (idx >= bal.length) revert BadCustomerIndex();
        unchecked {
            amount = (c & AMOUNT_MASK) * unit; // < 2^96 × 2^128: no overflow
        }
        ref = customers[idx];
        uint256 b = bal[idx];
        if (amount > b) {
            uint256 seq = uint64(c >> 112);
            declinedWords[seq >> 8] |= uint256(1) << (seq & 255);
            emit ChargeDeclined(seq, ref, amount, b);
            return (false, amount, ref);
        }
        unchecked {
            bal[idx] = b - amount;
        }
        return (true, amount, ref);
    }

    /// @dev Reads the balances of a batch's customers, which must be
    /// strictly ascending (each once: two entries for one customer would
    /// debit one balance twice over).
    function _balances(bytes32[] calldata customers) private view returns (uint256[] memory bal) {
        bal = new uint256[](customers.length);
        bytes32 prev;
        for (uint256 i; i < customers.length; ) {
            bytes32 ref = customers[i];
            if (ref <= prev) {
                if (ref == bytes32(0)) revert ZeroCustomer();
                revert CustomersNotSorted();
            }
            prev = ref;
            bal[i] = balanceOf[ref];
            unchecked {
                ++i;
            }
        }
    }

    // ---- refunds ----

    /// @notice Refunds charges with sequences in one bitmap word. The call
    /// resends the word's debited charges, as the settle transactions
    /// debited them, cut into `runs` (the number of charges of each run, in
    /// order), each with the index of its customer in `customers` in its
    /// bits 240-255 (a customer is sent once, however many charges it has);
    /// their hash chain must be the word's commitment. Each refund is a key (applied once: a key already
    /// decided is skipped) and an item packed as: bits 0-95 the amount in
    /// cents, 96-111 the index of its charge in charges. A refund that
    /// would take the charge's refunds past the charge, or more than the
    /// payee is owed, is rejected (RefundRejected: for good when it would
    /// pass the charge; while the payee is owed too little the key stays
    /// unused, so it can be sent again); none reverts the call.
    function refund(
        uint256 word,
        bytes32[] calldata customers,
        uint256[] calldata charges,
        uint256[] calldata runs,
        bytes32[] calldata keys,
        uint256[] calldata items
    ) external {
        if (msg.sender != operator) revert NotOperator();
        if (keys.length != items.length) revert LengthMismatch();
        _checkWord(word, customers, charges, runs);
        uint256 owed = payeeOwed;
        for (uint256 i; i < keys.length; ) {
            owed = _refundOne(keys[i], items[i], customers, charges, owed);
            unchecked {
                ++i;
            }
        }
        payeeOwed = owed;
    }

    /// @dev Checks that the runs hash to the word's commitment and that
    /// every charge is in the word.
    function _checkWord(
        uint256 word,
        bytes32[] calldata customers,
        uint256[] calldata charges,
        uint256[] calldata runs
    ) private view {
        bytes memory run = new bytes(charges.length * 64);
        bytes32 h;
        uint256 off;
        for (uint256 r; r < runs.length; ) {
            uint256 len = runs[r];
            if (len == 0 || off + len > charges.length) revert LengthMismatch();
            for (uint256 j; j < len; ) {
                uint256 c = charges[off + j];
                bytes32 ref = customers[c >> 240];
                c &= CHARGE_MASK;
                if (uint64(c >> 112) >> 8 != word) revert ChargeNotInWord();
                assembly ("memory-safe") {
                    let p := add(add(run, 32), shl(6, j))
                    mstore(p, c)
                    mstore(add(p, 32), ref)
                }
                unchecked {
                    ++j;
                }
            }
            bytes32 seg;
            assembly ("memory-safe") {
                seg := keccak256(add(run, 32), shl(6, len))
            }
            h = keccak256(abi.encodePacked(h, seg));
            unchecked {
                off += len;
                ++r;
            }
        }
        if (off != charges.length || h != wordCommit[word]) revert StaleCommitment();
    }

    /// @dev Applies one refund and returns what is then owed to the payee.
    function _refundOne(
        bytes32 key,
        uint256 it,
        bytes32[] calldata customers,
        uint256[] calldata charges,
        uint256 owed
    ) private returns (uint256) {
        if (key == bytes32(0)) revert ZeroKey();
        uint256 ci = uint16(it >> 96);
        if (ci >= charges.length) revert BadChargeIndex();
        uint256 amount = (it & AMOUNT_MASK) * unit;
        if (amount == 0) revert BadAmount();
        if (refundState[key] != 0) {
            emit RefundSkipped(key);
            return owed;
        }
        uint256 c = charges[ci];
        bytes32 ref = customers[c >> 240];
        uint256 seq = uint64(c >> 112);
        uint256 done = refundedOf[seq] + amount;
        if (done > (c & AMOUNT_MASK) * unit) {
            refundState[key] = 2;
            emit RefundRejected(key, seq, 1);
            return owed;
        }
        if (amount > owed) {
            // Not final: the payee may be funded (fundPayee) and the
            // refund sent again.
            emit RefundRejected(key, seq, 2);
            return owed;
        }
        refundedOf[seq] = done;
        balanceOf[ref] += amount;
        refundState[key] = 1;
        emit Refunded(key, seq, ref, amount);
        return owed - amount;
    }

    // ---- the payee ----

    /// @notice Sends the payee what it is owed (the payee or the operator
    /// may call it). Refunds come out of what is owed and not claimed.
    function claim() external returns (uint256 amount) {
        if (msg.sender != payee && msg.sender != operator) revert NotPayee();
        amount = payeeOwed;
        payeeOwed = 0;
        emit Claimed(payee, amount);
        if (amount != 0) _push(payee, amount);
    }

    /// @notice Adds the caller's tokens (after approve) to what is owed to
    /// the payee, so that refunds can be paid after a claim.
    function fundPayee(uint256 amount) external {
        if (amount == 0 || amount % unit != 0) revert BadAmount();
        _pull(msg.sender, amount);
        payeeOwed += amount;
        emit PayeeFunded(msg.sender, amount);
    }

    // ---- token calls ----

    function _pull(address from, uint256 amount) private {
        _call(abi.encodeCall(IERC20.transferFrom, (from, address(this), amount)));
    }

    function _push(address to, uint256 amount) private {
        _call(abi.encodeCall(IERC20.transfer, (to, amount)));
    }

    function _call(bytes memory data) private {
        (bool ok, bytes memory ret) = address(token).call(data);
        if (!ok) {
            // Bubble the token's own error (balance, allowance, signature).
            assembly ("memory-safe") {
                revert(add(ret, 32), mload(ret))
            }
        }
        if (ret.length != 0 && !abi.decode(ret, (bool))) revert TransferFailed();
    }
}
