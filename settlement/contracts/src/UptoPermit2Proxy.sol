// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

/// @notice The part of Uniswap's Permit2 (SignatureTransfer) the proxy calls.
interface ISignatureTransfer {
    struct TokenPermissions {
        address token;
        uint256 amount;
    }

    struct PermitTransferFrom {
        TokenPermissions permitted;
        uint256 nonce;
        uint256 deadline;
    }

    struct SignatureTransferDetails {
        address to;
        uint256 requestedAmount;
    }

    function permitWitnessTransferFrom(
        PermitTransferFrom calldata permit,
        SignatureTransferDetails calldata transferDetails,
        address owner,
        bytes32 witness,
        string calldata witnessTypeString,
        bytes calldata signature
    ) external;
}

/// @title The x402 `upto` scheme's Permit2 proxy, for test chains
/// @notice Written from the x402 `upto` scheme for EVM (specs/schemes/upto):
/// the buyer signs a Permit2 PermitWitnessTransferFrom of at most
/// permitted.amount whose spender is this proxy and whose witness names the
/// recipient (to), the one account that may settle it (facilitator) and when
/// it becomes valid (validAfter). settle() moves `amount`, at most the
/// permitted amount, from the buyer to witness.to; Permit2 checks the
/// signature, the deadline and the nonce (each nonce is used once, whatever
/// amount was taken). The ABI, the witness type string and the errors are
/// the scheme's proxy's, so the official x402 EVM clients sign for it
/// unchanged. On public chains the scheme's own build is deployed at
/// 0x4020A4f3b7b90ccA423B9fabCc0CE57C6C240002 by CREATE2; settleflow's test
/// chains (simulated, geth --dev) place this build's runtime code at that
/// address in their genesis. The EIP-2612 variant (settleWithPermit) is left
/// out: settleflow does not offer gas sponsoring of the Permit2 approval.
contract UptoPermit2Proxy {
    /// @notice Permit2's canonical address (the same on every chain).
    ISignatureTransfer public constant PERMIT2 = ISignatureTransfer(0x000000000022D473030F116dDEE9F6B43aC78BA3);

    /// @notice The witness's EIP-712 type, as Permit2 appends it.
    string public constant WITNESS_TYPE_STRING =
        "Witness witness)TokenPermissions(address token,uint256 amount)Witness(address to,address facilitator,uint256 validAfter)";

    /// @notice keccak256 of the witness's EIP-712 type.
    bytes32 public constant WITNESS_TYPEHASH = keccak256("Witness(address to,address facilitator,uint256 validAfter)");

    struct Witness {
        address to;
        address facilitator;
        uint256 validAfter;
    }

    event Settled();

    error AmountExceedsPermitted();
    error UnauthorizedFacilitator();
    error InvalidAmount();
    error InvalidOwner();
    error InvalidDestination();
    error PaymentTooEarly();
    error ReentrancyGuardReentrantCall();

    /// @dev 2 while settle runs (0 or 1 otherwise: genesis code has no
    /// constructor to set it).
    uint256 private entered;

    modifier nonReentrant() {
        if (entered == 2) revert ReentrancyGuardReentrantCall();
        entered = 2;
        _;
        entered = 1;
    }

    /// @notice Moves amount (at most permit.permitted.amount, more than 0)
    /// of the permitted token from owner to witness.to. Only
    /// witness.facilitator may call it, from witness.validAfter on.
    function settle(
        ISignatureTransfer.PermitTransferFrom calldata permit,
        uint256 amount,
        address owner,
        Witness calldata witness,
        bytes calldata signature
    ) external nonReentrant {
        if (amount > permit.permitted.amount) revert AmountExceedsPermitted();
        if (msg.sender != witness.facilitator) revert UnauthorizedFacilitator();
        if (amount == 0) revert InvalidAmount();
        if (owner == address(0)) revert InvalidOwner();
        if (witness.to == address(0)) revert InvalidDestination();
        if (block.timestamp < witness.validAfter) revert PaymentTooEarly();
        bytes32 witnessHash = keccak256(abi.encode(WITNESS_TYPEHASH, witness.to, witness.facilitator, witness.validAfter));
        PERMIT2.permitWitnessTransferFrom(
            permit,
            ISignatureTransfer.SignatureTransferDetails({to: witness.to, requestedAmount: amount}),
            owner,
            witnessHash,
            WITNESS_TYPE_STRING,
            signature
        );
        emit Settled();
    }
}
