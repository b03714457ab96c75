// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

/// @dev The one call the settlement contract makes into the token.
interface IERC20TransferFrom {
    function transferFrom(address from, address to, uint256 value) external returns (bool);
}

/// @title Settleflow settlement
/// @notice Records each workflow's charge once, keyed by its workflow id, and
/// moves the charges of a batch from the operator's account to the payee in a
/// single token transfer. A workflow id that is already recorded is skipped
/// (with an AlreadySettled event), never charged again, and never reverts the
/// batch.
contract SettleflowSettlement {
    /// @notice One workflow's charge.
    /// @param workflowId the workflow id's ASCII bytes, left-aligned, zero-padded
    /// @param customerRef keccak256 of the customer id (not written in clear)
    /// @param amount in the token's base units
    struct Charge {
        bytes32 workflowId;
        bytes32 customerRef;
        uint256 amount;
    }

    /// @notice The stablecoin charges are paid in.
    IERC20TransferFrom public immutable token;
    /// @notice Who receives every charge. Fixed at deployment.
    address public immutable payee;
    /// @notice Who may change the operator.
    address public immutable owner;
    /// @notice The account that settles and pays: it signs settle() and has
    /// approved this contract to move its tokens.
    address public operator;

    /// @notice Block number in which a workflow id was settled; 0 if never.
    mapping(bytes32 workflowId => uint256 blockNumber) public settledAt;

    event Settled(bytes32 indexed workflowId, bytes32 indexed customerRef, uint256 amount);
    event AlreadySettled(bytes32 indexed workflowId);
    event OperatorChanged(address indexed previous, address indexed next);

    error NotOperator();
    error NotOwner();
    error ZeroAddress();
    error ZeroWorkflowId();
    error TransferFailed();

    constructor(IERC20TransferFrom token_, address payee_, address operator_) {
        if (address(token_) == address(0) || payee_ == address(0) || operator_ == address(0)) {
            revert ZeroAddress();
        }
        token = token_;
        payee = payee_;
        owner = msg.sender;
        operator = operator_;
        emit OperatorChanged(address(0), operator_);
    }

    /// @notice Whether a workflow id has been settled.
    function settled(bytes32 workflowId) external view returns (bool) {
        return settledAt[workflowId] != 0;
    }

    /// @notice Replaces the operator (key rotation). Settlement records stay.
    function setOperator(address next) external {
        if (msg.sender != owner) revert NotOwner();
        if (next == address(0)) revert ZeroAddress();
        emit OperatorChanged(operator, next);
        operator = next;
    }

    /// @notice Settles a batch: records every charge whose workflow id is new,
    /// skips the others, and moves the sum of the new ones from the operator
    /// to the payee.
    /// @return total the amount moved, in base units
    function settle(Charge[] calldata charges) external returns (uint256 total) {
        if (msg.sender != operator) revert NotOperator();
        uint256 n = charges.length;
        for (uint256 i; i < n; ) {
            bytes32 id = charges[i].workflowId;
            if (id == bytes32(0)) revert ZeroWorkflowId();
            if (settledAt[id] != 0) {
                emit AlreadySettled(id);
            } else {
                settledAt[id] = block.number;
                uint256 amount = charges[i].amount;
                total += amount;
                emit Settled(id, charges[i].customerRef, amount);
            }
            unchecked {
                ++i;
            }
        }
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
