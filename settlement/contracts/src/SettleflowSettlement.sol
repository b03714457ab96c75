// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

/// @dev The one call the settlement contract makes into the token.
interface IERC20TransferFrom {
    function transferFrom(address from, address to, uint256 value) external returns (bool);
}

/// @title Settleflow settlement
/// @notice Records each workflow's charge once, as one bit keyed by the
/// workflow's sequence number (dense per environment, from 1), and moves the
/// charges of a batch from the operator's account to the payee in a single
/// token transfer. A sequence that is already recorded is skipped (with an
/// AlreadySettled event), never charged again, and never reverts the batch.
/// Every settlement is auditable by workflow id, sequence and customer
/// reference through the Settled event.
contract SettleflowSettlement {
    /// @notice One workflow's charge.
    /// @param workflowId the workflow id's ASCII bytes, left-aligned, zero-padded
    /// @param sequence the workflow's number in its environment (from 1): the
    /// idempotency key on chain
    /// @param customerRef keccak256 of the customer id (not written in clear)
    /// @param amount in the token's base units
    struct Charge {
        bytes32 workflowId;
        uint256 sequence;
        bytes32 customerRef;
        uint256 amount;
    }

    /// @notice The stablecoin charges are paid in.
    IERC20TransferFrom public immutable token;
    /// @notice Who receives every charge. Fixed at deployment.
    address public immutable payee;
    /// @notice Who may change the operator.
    address public immutable owner;
    /// @notice The block the contract was deployed in: no Settled event is
    /// older (where a search of the logs may start).
    uint256 public immutable deployedAt;
    /// @notice The account that settles and pays: it signs settle() and has
    /// approved this contract to move its tokens.
    address public operator;

    /// @notice The settlement bitmap: bit (sequence & 255) of word
    /// (sequence >> 8) is set once that sequence is settled.
    mapping(uint256 word => uint256 bits) public settledWords;

    /// @notice A workflow was charged: emitted once per sequence, ever.
    event Settled(bytes32 indexed workflowId, uint256 indexed sequence, bytes32 indexed customerRef, uint256 amount);
    /// @notice A charge whose sequence was already settled was skipped.
    event AlreadySettled(bytes32 indexed workflowId, uint256 indexed sequence);
    event OperatorChanged(address indexed previous, address indexed next);

    error NotOperator();
    error NotOwner();
    error ZeroAddress();
    error ZeroWorkflowId();
    error ZeroSequence();
    error TransferFailed();

    constructor(IERC20TransferFrom token_, address payee_, address operator_) {
        if (address(token_) == address(0) || payee_ == address(0) || operator_ == address(0)) {
            revert ZeroAddress();
        }
        token = token_;
        payee = payee_;
        owner = msg.sender;
        operator = operator_;
        deployedAt = block.number;
        emit OperatorChanged(address(0), operator_);
    }

    /// @notice Whether a sequence has been settled.
    function settled(uint256 sequence) external view returns (bool) {
        return (settledWords[sequence >> 8] >> (sequence & 255)) & 1 != 0;
    }

    /// @notice Replaces the operator (key rotation). Settlement records stay.
    function setOperator(address next) external {
        if (msg.sender != owner) revert NotOwner();
        if (next == address(0)) revert ZeroAddress();
        emit OperatorChanged(operator, next);
        operator = next;
    }

    /// @notice Settles a batch: records every charge whose sequence is new,
    /// skips the others, and moves the sum of the new ones from the operator
    /// to the payee. Consecutive sequences share a storage word, which is
    /// read and written once per run of charges in the same word.
    /// @return total the amount moved, in base units
    function settle(Charge[] calldata charges) external returns (uint256 total) {
        if (msg.sender != operator) revert NotOperator();
        uint256 n = charges.length;
        // The word being updated, kept in memory: no sequence maps to word
        // type(uint256).max, so it means "none loaded".
        uint256 wordIndex = type(uint256).max;
        uint256 word;
        bool dirty;
        for (uint256 i; i < n; ) {
            Charge calldata c = charges[i];
            bytes32 id = c.workflowId;
            uint256 seq = c.sequence;
            if (id == bytes32(0)) revert ZeroWorkflowId();
            if (seq == 0) revert ZeroSequence();
            uint256 w = seq >> 8;
            if (w != wordIndex) {
                if (dirty) {
                    settledWords[wordIndex] = word;
                    dirty = false;
                }
                wordIndex = w;
                word = settledWords[w];
            }
            uint256 bit = uint256(1) << (seq & 255);
            if (word & bit != 0) {
                emit AlreadySettled(id, seq);
            } else {
                word |= bit;
                dirty = true;
                uint256 amount = c.amount;
                total += amount;
                emit Settled(id, seq, c.customerRef, amount);
            }
            unchecked {
                ++i;
            }
        }
        if (dirty) settledWords[wordIndex] = word;
        if (total != 0) {
            (bool ok, bytes memory ret) = address(token).call(
                abi.encodeCall(IERC20TransferFrom.transferFrom, (msg.sender, payee, total))
            );
            if (!ok) {
                // Bubble the token's own error (insufficient balance or allowance).
                assembly ("memory-safe") {
                    revert(add(ret, 32), mload(ret))
                }
            }
            if (ret.length != 0 && !abi.decode(ret, (bool))) revert TransferFailed();
        }
    }
}
