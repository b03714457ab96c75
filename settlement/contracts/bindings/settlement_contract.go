// Code generated via abigen V2 - DO NOT EDIT.
// This file is a generated binding and any manual changes will be lost.

package bindings

import (
	"bytes"
	"errors"
	"math/big"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
)

// Reference imports to suppress errors if they are not otherwise used.
var (
	_ = bytes.Equal
	_ = errors.New
	_ = big.NewInt
	_ = common.Big1
	_ = types.BloomLookup
	_ = abi.ConvertType
)

// SettleflowSettlementMetaData contains all meta data concerning the SettleflowSettlement contract.
var SettleflowSettlementMetaData = bind.MetaData{
	ABI: "[{\"inputs\":[{\"internalType\":\"contractIERC20\",\"name\":\"token_\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"payee_\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"operator_\",\"type\":\"address\"},{\"internalType\":\"uint256\",\"name\":\"unit_\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"withdrawalNotice_\",\"type\":\"uint256\"}],\"stateMutability\":\"nonpayable\",\"type\":\"constructor\"},{\"inputs\":[],\"name\":\"BadAmount\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"BadCharge\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"BadChargeIndex\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"BadCustomerIndex\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"BadSignature\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"ChargeNotInWord\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"CustomersNotSorted\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"GrantExpired\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"GrantUsed\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"LengthMismatch\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"NoOwnerChange\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"NoWithdrawalPending\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"NotCustomerOwner\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"NotOperator\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"NotOwner\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"NotPayee\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"effectiveAt\",\"type\":\"uint256\"}],\"name\":\"OwnerChangeNotYetDue\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"recorded\",\"type\":\"address\"}],\"name\":\"OwnerMismatch\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"OwnerUnchanged\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"StaleCommitment\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"TransferFailed\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"availableAt\",\"type\":\"uint256\"}],\"name\":\"WithdrawalNotYetAvailable\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"ZeroAddress\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"ZeroCustomer\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"ZeroKey\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"ZeroSequence\",\"type\":\"error\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"uint256\",\"name\":\"sequence\",\"type\":\"uint256\"}],\"name\":\"AlreadySettled\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"uint256\",\"name\":\"sequence\",\"type\":\"uint256\"},{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"customerRef\",\"type\":\"bytes32\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"balance\",\"type\":\"uint256\"}],\"name\":\"ChargeDeclined\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"address\",\"name\":\"payee\",\"type\":\"address\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"}],\"name\":\"Claimed\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"customerRef\",\"type\":\"bytes32\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"from\",\"type\":\"address\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"balance\",\"type\":\"uint256\"}],\"name\":\"Deposited\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"address\",\"name\":\"previous\",\"type\":\"address\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"next\",\"type\":\"address\"}],\"name\":\"OperatorChanged\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"customerRef\",\"type\":\"bytes32\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"next\",\"type\":\"address\"}],\"name\":\"OwnerChangeCanceled\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"customerRef\",\"type\":\"bytes32\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"next\",\"type\":\"address\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"effectiveAt\",\"type\":\"uint256\"}],\"name\":\"OwnerChangeProposed\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"customerRef\",\"type\":\"bytes32\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"owner\",\"type\":\"address\"}],\"name\":\"OwnerSet\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"address\",\"name\":\"from\",\"type\":\"address\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"}],\"name\":\"PayeeFunded\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"key\",\"type\":\"bytes32\"},{\"indexed\":true,\"internalType\":\"uint256\",\"name\":\"sequence\",\"type\":\"uint256\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"reason\",\"type\":\"uint256\"}],\"name\":\"RefundRejected\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"key\",\"type\":\"bytes32\"}],\"name\":\"RefundSkipped\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"key\",\"type\":\"bytes32\"},{\"indexed\":true,\"internalType\":\"uint256\",\"name\":\"sequence\",\"type\":\"uint256\"},{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"customerRef\",\"type\":\"bytes32\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"}],\"name\":\"Refunded\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"customerRef\",\"type\":\"bytes32\"}],\"name\":\"WithdrawalCanceled\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"customerRef\",\"type\":\"bytes32\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"availableAt\",\"type\":\"uint256\"}],\"name\":\"WithdrawalRequested\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"customerRef\",\"type\":\"bytes32\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"to\",\"type\":\"address\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"}],\"name\":\"Withdrawn\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"uint256\",\"name\":\"word\",\"type\":\"uint256\"}],\"name\":\"WordSettled\",\"type\":\"event\"},{\"inputs\":[],\"name\":\"DOMAIN_SEPARATOR\",\"outputs\":[{\"internalType\":\"bytes32\",\"name\":\"\",\"type\":\"bytes32\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"OWNER_GRANT_TYPEHASH\",\"outputs\":[{\"internalType\":\"bytes32\",\"name\":\"\",\"type\":\"bytes32\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"ref\",\"type\":\"bytes32\"}],\"name\":\"account\",\"outputs\":[{\"internalType\":\"address\",\"name\":\"owner_\",\"type\":\"address\"},{\"internalType\":\"uint256\",\"name\":\"balance\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"pending\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"availableAt\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"ref\",\"type\":\"bytes32\"}],\"name\":\"balanceOf\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"ref\",\"type\":\"bytes32\"}],\"name\":\"cancelOwnerChange\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"ref\",\"type\":\"bytes32\"}],\"name\":\"cancelWithdrawal\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"ref\",\"type\":\"bytes32\"},{\"internalType\":\"address\",\"name\":\"next\",\"type\":\"address\"},{\"internalType\":\"bytes32\",\"name\":\"nonce\",\"type\":\"bytes32\"},{\"internalType\":\"string\",\"name\":\"origin\",\"type\":\"string\"},{\"internalType\":\"uint256\",\"name\":\"deadline\",\"type\":\"uint256\"},{\"internalType\":\"uint8\",\"name\":\"v\",\"type\":\"uint8\"},{\"internalType\":\"bytes32\",\"name\":\"r\",\"type\":\"bytes32\"},{\"internalType\":\"bytes32\",\"name\":\"s\",\"type\":\"bytes32\"}],\"name\":\"changeOwner\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"claim\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"}],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"ref\",\"type\":\"bytes32\"}],\"name\":\"completeOwnerChange\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"sequence\",\"type\":\"uint256\"}],\"name\":\"declined\",\"outputs\":[{\"internalType\":\"bool\",\"name\":\"\",\"type\":\"bool\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"word\",\"type\":\"uint256\"}],\"name\":\"declinedWords\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"bits\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"deployedAt\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"ref\",\"type\":\"bytes32\"},{\"internalType\":\"address\",\"name\":\"owner_\",\"type\":\"address\"},{\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"}],\"name\":\"deposit\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"ref\",\"type\":\"bytes32\"},{\"internalType\":\"address\",\"name\":\"owner_\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"from\",\"type\":\"address\"},{\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"validAfter\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"validBefore\",\"type\":\"uint256\"},{\"internalType\":\"bytes32\",\"name\":\"salt\",\"type\":\"bytes32\"},{\"internalType\":\"uint8\",\"name\":\"v\",\"type\":\"uint8\"},{\"internalType\":\"bytes32\",\"name\":\"r\",\"type\":\"bytes32\"},{\"internalType\":\"bytes32\",\"name\":\"s\",\"type\":\"bytes32\"}],\"name\":\"depositWithAuthorization\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"}],\"name\":\"fundPayee\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"signer\",\"type\":\"address\"},{\"internalType\":\"bytes32\",\"name\":\"nonce\",\"type\":\"bytes32\"}],\"name\":\"grantUsed\",\"outputs\":[{\"internalType\":\"bool\",\"name\":\"used\",\"type\":\"bool\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"operator\",\"outputs\":[{\"internalType\":\"address\",\"name\":\"\",\"type\":\"address\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"owner\",\"outputs\":[{\"internalType\":\"address\",\"name\":\"\",\"type\":\"address\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"ref\",\"type\":\"bytes32\"}],\"name\":\"ownerChange\",\"outputs\":[{\"internalType\":\"address\",\"name\":\"next\",\"type\":\"address\"},{\"internalType\":\"uint256\",\"name\":\"effectiveAt\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"payee\",\"outputs\":[{\"internalType\":\"address\",\"name\":\"\",\"type\":\"address\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"payeeOwed\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"word\",\"type\":\"uint256\"},{\"internalType\":\"bytes32[]\",\"name\":\"customers\",\"type\":\"bytes32[]\"},{\"internalType\":\"uint256[]\",\"name\":\"charges\",\"type\":\"uint256[]\"},{\"internalType\":\"uint256[]\",\"name\":\"runs\",\"type\":\"uint256[]\"},{\"internalType\":\"bytes32[]\",\"name\":\"keys\",\"type\":\"bytes32[]\"},{\"internalType\":\"uint256[]\",\"name\":\"items\",\"type\":\"uint256[]\"}],\"name\":\"refund\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"key\",\"type\":\"bytes32\"}],\"name\":\"refundState\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"state\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"sequence\",\"type\":\"uint256\"}],\"name\":\"refundedOf\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"ref\",\"type\":\"bytes32\"},{\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"}],\"name\":\"requestWithdrawal\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"next\",\"type\":\"address\"}],\"name\":\"setOperator\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"ref\",\"type\":\"bytes32\"},{\"internalType\":\"address\",\"name\":\"owner_\",\"type\":\"address\"},{\"internalType\":\"bytes32\",\"name\":\"nonce\",\"type\":\"bytes32\"},{\"internalType\":\"string\",\"name\":\"origin\",\"type\":\"string\"},{\"internalType\":\"uint256\",\"name\":\"deadline\",\"type\":\"uint256\"},{\"internalType\":\"uint8\",\"name\":\"v\",\"type\":\"uint8\"},{\"internalType\":\"bytes32\",\"name\":\"r\",\"type\":\"bytes32\"},{\"internalType\":\"bytes32\",\"name\":\"s\",\"type\":\"bytes32\"}],\"name\":\"setOwner\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32[]\",\"name\":\"customers\",\"type\":\"bytes32[]\"},{\"internalType\":\"uint256[]\",\"name\":\"charges\",\"type\":\"uint256[]\"}],\"name\":\"settle\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"total\",\"type\":\"uint256\"}],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"sequence\",\"type\":\"uint256\"}],\"name\":\"settled\",\"outputs\":[{\"internalType\":\"bool\",\"name\":\"\",\"type\":\"bool\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"word\",\"type\":\"uint256\"}],\"name\":\"settledWords\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"bits\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"token\",\"outputs\":[{\"internalType\":\"contractIERC20\",\"name\":\"\",\"type\":\"address\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"unit\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"version\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"ref\",\"type\":\"bytes32\"}],\"name\":\"withdraw\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"}],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"withdrawalNotice\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"word\",\"type\":\"uint256\"}],\"name\":\"wordCommit\",\"outputs\":[{\"internalType\":\"bytes32\",\"name\":\"chain\",\"type\":\"bytes32\"}],\"stateMutability\":\"view\",\"type\":\"function\"}]",
	ID:  "SettleflowSettlement",
	Bin: "0x61018080604052346102735760a081612c3c80380380916100208285610277565b8339810103126102735780516001600160a01b038116908181036102735761004a602084016102ae565b610056604085016102ae565b916080606086015195015193158015610262575b8015610251575b6102425784158015610232575b6102235760805260a0523360c05260018060a01b0316918260018060a01b03195f5416175f5560e052610100524361012052466101605260405160208101907f8b73c3c69bb8fe3d512ecc4cf759cc79239f7b179b0ffacaa9a75d522b39400f82527fa1666c91d16f4cbd9afc56a717dc67279b295de175b62590b18205a4626d366e60408201527f13600b294191fc92924bb3ce4b969c1e7e2bab8f4c93c3fc6d0a51733df3c06060608201524660808201523060a082015260a0815261014760c082610277565b51902061014052604051905f7fd58299b712891143e76310d5e664c4203c940a67db37cf856bdaa3c5c76a802c8180a361297990816102c38239608051818181610384015281816110b401526128ab015260a0518181816108970152610e72015260c0518181816107720152610b6e015260e0518181816101fa0152818161097b01528181610fdc01528181611f4e01528181612077015261237901526101005181818161026c0152818161160c01528181611d710152612512015261012051816103c001526101405181611be001526101605181611bba0152f35b63749b593960e01b5f5260045ffd5b506001600160801b03851161007e565b63d92e233d60e01b5f5260045ffd5b506001600160a01b03831615610071565b506001600160a01b0382161561006a565b5f80fd5b601f909101601f19168101906001600160401b0382119082101761029a57604052565b634e487b7160e01b5f52604160045260245ffd5b51906001600160a01b03821682036102735756fe6080806040526004361015610012575f80fd5b5f905f3560e01c908162a69bac146115f75750806328345780146115c05780632cf43492146115895780633611866b146115295780633644e51514611507578063399f9f34146111865780634134d402146110085780634c383cfd14610f445780634e71d92d14610e5f57806354fd4d5014610e43578063570ca73514610e10578063612131ef14610de657806369296ecb14610d685780636c7f154214610d3e57806370738c8d14610d035780637213c5a014610c2d57806386cb09b814610c03578063882358ae14610b925780638da5cb5b14610b415780638e19899e1461099e578063907af6c0146109635780639e6897fe14610939578063a5f58c84146108e5578063a6b012f5146108bb578063ae90b2131461086a578063b3ab15fb14610741578063b60aec471461065d578063ba80af311461063f578063c835607c14610615578063c98e5af714610530578063d51404ec1461050f578063d954863c146104da578063d9934e82146103e3578063eae4c19f146103a8578063fc0c546a146103575763ffc3020f146101a9575f80fd5b346103545760406003193601126103545760043560243581835260026020526040832073ffffffffffffffffffffffffffffffffffffffff8154168033149081159161034b575b506103235761021f7f000000000000000000000000000000000000000000000000000000000000000083611c9a565b6102f3578284526001602052604084205480831161031b575b5081156102f3577f37a5dc96283c260ba952c99b4383003a337bb17cafd9416409ae55b9ca7fd60e916040916102e56102917f000000000000000000000000000000000000000000000000000000000000000042611895565b6001830184905582547fffffffff0000000000000000ffffffffffffffffffffffffffffffffffffffff1660a082901b7bffffffffffffffff00000000000000000000000000000000000000001617909255565b82519182526020820152a280f35b6004847f749b5939000000000000000000000000000000000000000000000000000000008152fd5b91505f610238565b6004847f6cb4fda5000000000000000000000000000000000000000000000000000000008152fd5b9050155f6101f0565b80fd5b5034610354578060031936011261035457602060405173ffffffffffffffffffffffffffffffffffffffff7f0000000000000000000000000000000000000000000000000000000000000000168152f35b503461035457806003193601126103545760206040517f00000000000000000000000000000000000000000000000000000000000000008152f35b50346103545760206003193601126103545760043580825260026020526040822073ffffffffffffffffffffffffffffffffffffffff835416331415806104a6575b61047e5773ffffffffffffffffffffffffffffffffffffffff6002820154161561045657906104539161281b565b80f35b6004837fc04089e6000000000000000000000000000000000000000000000000000000008152fd5b6004837f6cb4fda5000000000000000000000000000000000000000000000000000000008152fd5b5073ffffffffffffffffffffffffffffffffffffffff815416803314908115916104d1575b50610425565b9050155f6104cb565b5034610354576060600319360112610354576104536104f7611660565b6044359061050582336123a5565b339060043561229a565b503461035457610453610521366116a6565b97969096959195949294611cde565b50346103545761053f366116a6565b989795948689959295949394526002602052604089209573ffffffffffffffffffffffffffffffffffffffff87541680331480159061060d575b6105e55773ffffffffffffffffffffffffffffffffffffffff8a16146105bd57916105ae9593916104539a9b95938a8a612591565b6105b8828261281b565b612471565b60048a7fdf129d24000000000000000000000000000000000000000000000000000000008152fd5b60048b7f6cb4fda5000000000000000000000000000000000000000000000000000000008152fd5b508015610579565b50346103545760206003193601126103545760406020916004358152600583522054604051908152f35b50346103545780600319360112610354576020600954604051908152f35b50346103545760206003193601126103545760043590818152600260205260408120600281019283549173ffffffffffffffffffffffffffffffffffffffff83169283156107195767ffffffffffffffff9060a01c16948542106106ed5780547fffffffff0000000000000000000000000000000000000000000000000000000016905592935061045392612471565b602485877f51adea60000000000000000000000000000000000000000000000000000000008252600452fd5b6004857fc04089e6000000000000000000000000000000000000000000000000000000008152fd5b50346103545760206003193601126103545761075b611683565b73ffffffffffffffffffffffffffffffffffffffff7f00000000000000000000000000000000000000000000000000000000000000001633036108425773ffffffffffffffffffffffffffffffffffffffff16801561081a577fffffffffffffffffffffffff000000000000000000000000000000000000000082548273ffffffffffffffffffffffffffffffffffffffff82167fd58299b712891143e76310d5e664c4203c940a67db37cf856bdaa3c5c76a802c8680a31617815580f35b6004827fd92e233d000000000000000000000000000000000000000000000000000000008152fd5b6004827f30cd7471000000000000000000000000000000000000000000000000000000008152fd5b5034610354578060031936011261035457602060405173ffffffffffffffffffffffffffffffffffffffff7f0000000000000000000000000000000000000000000000000000000000000000168152f35b50346103545760206003193601126103545760406020916004358152600683522054604051908152f35b50346103545760406003193601126103545760ff604060209273ffffffffffffffffffffffffffffffffffffffff61091b611683565b16815260038452818120602435825284522054166040519015158152f35b50346103545760206003193601126103545760406020916004358152600483522054604051908152f35b503461035457806003193601126103545760206040517f00000000000000000000000000000000000000000000000000000000000000008152f35b503461035457602060031936011261035457600435908181526002602052604081209081549173ffffffffffffffffffffffffffffffffffffffff831691823314801590610b39575b610b1157600182018054948515610ae95767ffffffffffffffff9060a01c16804210610abe575091818493876020989452600188526040822054968781105f14610ab357610a36908098611cd1565b848352600189526040832055557fffffffff0000000000000000ffffffffffffffffffffffffffffffffffffffff81541690557f04eda370f8b8612fa7266d7ebbd41af9d694e19793fe9d9ff31b3ddbd99b08e185604051868152a38180610aa3575b5050604051908152f35b610aac9161240f565b5f81610a99565b50610a368780611cd1565b7f449406b5000000000000000000000000000000000000000000000000000000008352600452602482fd5b6004837f83e89493000000000000000000000000000000000000000000000000000000008152fd5b807f6cb4fda50000000000000000000000000000000000000000000000000000000060049252fd5b5082156109e7565b5034610354578060031936011261035457602060405173ffffffffffffffffffffffffffffffffffffffff7f0000000000000000000000000000000000000000000000000000000000000000168152f35b50346103545760206003193601126103545760809067ffffffffffffffff6004358083526002602052600160408085209485549381528260205220549301546040519373ffffffffffffffffffffffffffffffffffffffff831685526020850152604084015260a01c166060820152f35b50346103545760206003193601126103545760406020916004358152600783522054604051908152f35b50346103545760206003193601126103545760043580825260026020526040822073ffffffffffffffffffffffffffffffffffffffff81541680331490811591610cfa575b5061047e5760018101805415610cd2578390557fffffffff0000000000000000ffffffffffffffffffffffffffffffffffffffff81541690557fd8cbc85a53c8256123df110cc63eff1c972996c0ff5f10b6c8ec09a825d2c9c08280a280f35b6004847f83e89493000000000000000000000000000000000000000000000000000000008152fd5b9050155f610c72565b503461035457806003193601126103545760206040517fee28629e3ad1e1e66bdd2da37883f39a7c56feb9a368ab965e44c9403dfbc5d58152f35b50346103545760206003193601126103545760406020916004358152600183522054604051908152f35b50346103545760206003193601126103545760026040610de292600435815282602052200154604051918173ffffffffffffffffffffffffffffffffffffffff67ffffffffffffffff859460a01c169116836020909392919373ffffffffffffffffffffffffffffffffffffffff60408201951681520152565b0390f35b50346103545760206003193601126103545760406020916004358152600883522054604051908152f35b503461035457806003193601126103545773ffffffffffffffffffffffffffffffffffffffff6020915416604051908152f35b5034610354578060031936011261035457602060405160048152f35b50346103545780600319360112610354577f00000000000000000000000000000000000000000000000000000000000000009073ffffffffffffffffffffffffffffffffffffffff8216918233141580610f23575b610efb57602092600954926009557fd8138f8a3f377c5259ca548e70e4c2de94f129f5a11036a15b69513cba2b426a84604051858152a28180610aa3575050604051908152f35b6004827f56cab67b000000000000000000000000000000000000000000000000000000008152fd5b5073ffffffffffffffffffffffffffffffffffffffff825416331415610eb4565b50346103545760206003193601126103545760043580158015610fd6575b610fae57610f7081336123a5565b610f7c81600954611895565b6009556040519081527fb93525465b6a6b5ecba22f70164cc7026bddb8a37aa7682e5bf5b1a94a6864dc60203392a280f35b6004827f749b5939000000000000000000000000000000000000000000000000000000008152fd5b506110017f000000000000000000000000000000000000000000000000000000000000000082611c9a565b1515610f62565b5034611182576101406003193601126111825760043590611027611660565b60443573ffffffffffffffffffffffffffffffffffffffff811691828203611182576064359260e4359060ff821680920361118257604051602081019088825273ffffffffffffffffffffffffffffffffffffffff8516604082015260c43560608201526060815261109a60808261174d565b51902073ffffffffffffffffffffffffffffffffffffffff7f000000000000000000000000000000000000000000000000000000000000000016803b15611182575f92836101249260405196879586947fef55bec600000000000000000000000000000000000000000000000000000000865260048601523060248601528b6044860152608435606486015260a435608486015260a485015260c48401526101043560e484015283356101048401525af1801561117757611161575b50610453939461229a565b61045394505f6111709161174d565b5f93611156565b6040513d5f823e3d90fd5b5f80fd5b346111825760c06003193601126111825760043560243567ffffffffffffffff8111611182576111ba90369060040161162f565b60449291923567ffffffffffffffff8111611182576111dd90369060040161162f565b9160643567ffffffffffffffff8111611182576111fe90369060040161162f565b60849691963567ffffffffffffffff81116111825761122190369060040161162f565b97909660a43567ffffffffffffffff81116111825761124490369060040161162f565b92909373ffffffffffffffffffffffffffffffffffffffff5f541633036114df57838b03611477578860061b8981046040148a1517156114b257906112898a926117f5565b5f935f925f9260208101915b80851061134f5750505050501491821592611337575b505061130f5796959493929190600954975f975b8089106112cd5760098a9055005b909192939495969798611300600191898989898f8f6112f0828b6112f993611885565b35918b8d611885565b3590612047565b990197969594939291906112bf565b7f3d618e50000000000000000000000000000000000000000000000000000000005f5260045ffd5b9091505f52600660205260405f2054141589806112ab565b91939590929496611361878488611885565b3591821590811561149f575b50611477578c8f8f8e905f925b8c8785106113c457505050505050906001918160061b862060405190602082019283526040820152604081526113b160608261174d565b5190209701950193918d95949391611295565b916113dd916113d7866113e99695611895565b91611885565b35938460f01c91611885565b358b66ffffffffffffff6effffffffffffffffffffffffffffff8560781c16160361144f5760406001937dffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff8460061b8a01911660208201520152018f908f8f92908f9161137a565b7f237d5ec2000000000000000000000000000000000000000000000000000000005f5260045ffd5b7fff633a38000000000000000000000000000000000000000000000000000000005f5260045ffd5b90506114ab838a611895565b118f61136d565b7f4e487b71000000000000000000000000000000000000000000000000000000005f52601160045260245ffd5b7f7c214f04000000000000000000000000000000000000000000000000000000005f5260045ffd5b34611182575f600319360112611182576020611521611bb7565b604051908152f35b346111825760406003193601126111825760043567ffffffffffffffff81116111825761155a90369060040161162f565b6024359067ffffffffffffffff82116111825760209261158161152193369060040161162f565b9290916118a2565b3461118257602060031936011261118257602060016004358060081c5f526005835260ff60405f205491161c161515604051908152f35b3461118257602060031936011261118257602060016004358060081c5f526004835260ff60405f205491161c161515604051908152f35b34611182575f600319360112611182576020907f00000000000000000000000000000000000000000000000000000000000000008152f35b9181601f840112156111825782359167ffffffffffffffff8311611182576020808501948460051b01011161118257565b6024359073ffffffffffffffffffffffffffffffffffffffff8216820361118257565b6004359073ffffffffffffffffffffffffffffffffffffffff8216820361118257565b610100600319820112611182576004359160243573ffffffffffffffffffffffffffffffffffffffff8116810361118257916044359160643567ffffffffffffffff811161118257826023820112156111825780600401359267ffffffffffffffff841161118257602484830101116111825760240191906084359060a43560ff81168103611182579060c4359060e43590565b818102929181159184041417156114b257565b90601f7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe0910116810190811067ffffffffffffffff82111761178e57604052565b7f4e487b71000000000000000000000000000000000000000000000000000000005f52604160045260245ffd5b67ffffffffffffffff811161178e57601f017fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe01660200190565b906117ff826117bb565b61180c604051918261174d565b8281527fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe061183a82946117bb565b0190602036910137565b80518210156118585760209160051b010190565b7f4e487b71000000000000000000000000000000000000000000000000000000005f52603260045260245ffd5b91908110156118585760051b0190565b919082018092116114b257565b91939290935f9073ffffffffffffffffffffffffffffffffffffffff5f541633036114df576118d086611e89565b926118de604051948561174d565b8684527fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe061190b88611e89565b013660208601375f5f5b888110611b2d5750508060061b818104604014821517156114b257611939906117f5565b5f917fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff5f905f925f965f5b828110611a04575050509061197b94939291611ea1565b60e01c6119dc5780156119d4575f5b82518110156119be57806119a060019285611844565b516119ac828988611885565b355f528260205260405f20550161198a565b50935050506119cf82600954611895565b600955565b505f93505050565b7f7214059a000000000000000000000000000000000000000000000000000000005f5260045ffd5b8060051b8201358099179867ffffffffffffffff8160701c16908115611b05578f818f918f9366ffffffffffffff9060781c16898103611ad5575b506001607083901c60ff161b8a811615611a87575050505050906001917f8fec535e2000df0687739fc3f7b0b32ca8943ff6ba4f67b2172ade47d16ace065f80a25b01611964565b9194509198611a9d939a5017978360019a611f33565b91929092611ab1575b505050600190611a81565b99889160406001959e9c8360061b8d01906020820152015201980199905f80611aa6565b98611aeb959d94508c93509a919a999099611ea1565b5f978b8d5f98875f52600460205260405f2054985f611a3f565b7f771ba714000000000000000000000000000000000000000000000000000000005f5260045ffd5b611b38818a89611885565b3591821115611b6157600190825f528160205260405f2054611b5a8289611844565b5201611915565b5015611b8f577fc84ea9a5000000000000000000000000000000000000000000000000000000005f5260045ffd5b7fca0845bd000000000000000000000000000000000000000000000000000000005f5260045ffd5b467f000000000000000000000000000000000000000000000000000000000000000003611c02577f000000000000000000000000000000000000000000000000000000000000000090565b60405160208101907f8b73c3c69bb8fe3d512ecc4cf759cc79239f7b179b0ffacaa9a75d522b39400f82527fa1666c91d16f4cbd9afc56a717dc67279b295de175b62590b18205a4626d366e60408201527f13600b294191fc92924bb3ce4b969c1e7e2bab8f4c93c3fc6d0a51733df3c06060608201524660808201523060a082015260a08152611c9460c08261174d565b51902090565b8115611ca4570690565b7f4e487b71000000000000000000000000000000000000000000000000000000005f52601260045260245ffd5b919082039182116114b257565b969390979491959273ffffffffffffffffffffffffffffffffffffffff5f541633036114df57611d0f968989612591565b805f52600260205260405f2073ffffffffffffffffffffffffffffffffffffffff80825416931692838114611e615715611e135760207f3b6b22e9e529798a1e194d28f7e6a6310e877810512316ae7246ab8116a1c58491611e0a6002611d967f000000000000000000000000000000000000000000000000000000000000000042611895565b920180547fffffffff0000000000000000ffffffffffffffffffffffffffffffffffffffff88167fffffffff000000000000000000000000000000000000000000000000000000009091161760a084901b7bffffffffffffffff000000000000000000000000000000000000000016179055565b604051908152a3565b827fffffffffffffffffffffffff00000000000000000000000000000000000000008254161790557fac803f2d7baf8977db614b92886816b923ee887c90ce5949164b63d8700f8ec45f80a3565b7fdf129d24000000000000000000000000000000000000000000000000000000005f5260045ffd5b67ffffffffffffffff811161178e5760051b60200190565b9391611f20575b508015611f1b5760209060061b910120815f52600660205260405f2054906040519060208201928352604082015260408152611ee560608261174d565b519020815f52600660205260405f20557fb5e2b0c5fa5504f27a19e82caabf843ccd18f819af1eae7af1d6d0d60d1bb0725f80a2565b505050565b835f52600460205260405f20555f611ea8565b9391929361ffff8260601c16815181101561201f57611f85817f00000000000000000000000000000000000000000000000000000000000000006bffffffffffffffffffffffff861602978897611885565b35948593611f938385611844565b5190818311611fb15750039250611fa991611844565b526001929190565b67ffffffffffffffff9194507fb2ae23560d3793b5e33f1139545669a5dd751b219e87d55485b53e108c58a07993506040925066ffffffffffffff8160701c9160781c165f526005602052825f20600160ff83161b815417905582519489865260208601521692a35f929190565b7f22f787fc000000000000000000000000000000000000000000000000000000005f5260045ffd5b95939491909186156122725761ffff8360601c16908082101561224a5761209f6bffffffffffffffffffffffff947f00000000000000000000000000000000000000000000000000000000000000009586911661173a565b96871561222257885f52600860205260405f20546121f257916113dd916120c69493611885565b359161210467ffffffffffffffff8260701c1692835f5260076020526bffffffffffffffffffffffff6120fd8860405f2054611895565b931661173a565b81116121b05783851161217d579461217a95825f52600760205260405f2055825f52600160205260405f2061213a868254611895565b9055805f526008602052600160405f20557fc0721ae73b3f8d344a611dc50526cc0c898d2d8210fa7a2361c7ead3df0ad5196020604051878152a4611cd1565b90565b50925050917ff583fe8b08b74cccbc51d14bb881e3b85d342700ceb230425d1cc13dd7cf0b49602060405160028152a390565b5092505091805f526008602052600260405f20557ff583fe8b08b74cccbc51d14bb881e3b85d342700ceb230425d1cc13dd7cf0b49602060405160018152a390565b5050505050509190507fb6f0ab26a0b5d2999711cd058e861f01cc2e9c31ac0c275d4ecce044cca15cbd5f80a290565b7f749b5939000000000000000000000000000000000000000000000000000000005f5260045ffd5b7f9c511c25000000000000000000000000000000000000000000000000000000005f5260045ffd5b7ffbd849c6000000000000000000000000000000000000000000000000000000005f5260045ffd5b91908215611b8f5783158015612373575b6122225773ffffffffffffffffffffffffffffffffffffffff90835f5260026020528160405f20541691829116036123485750604073ffffffffffffffffffffffffffffffffffffffff7f2dcdaad87b561ba5a69835009b4c53ef9d3c41ca6cc9574049187659d6c6a71592845f52600160205261232c86845f2054611895565b855f52600160205280845f2055835196875260208701521693a3565b7f70e6839e000000000000000000000000000000000000000000000000000000005f5260045260245ffd5b5061239e7f000000000000000000000000000000000000000000000000000000000000000085611c9a565b15156122ab565b61240d9173ffffffffffffffffffffffffffffffffffffffff604051927f23b872dd00000000000000000000000000000000000000000000000000000000602085015216602483015230604483015260648201526064815261240860848261174d565b61288a565b565b6040517fa9059cbb00000000000000000000000000000000000000000000000000000000602082015273ffffffffffffffffffffffffffffffffffffffff91909116602482015260448082019290925290815261240d9061240860648261174d565b909173ffffffffffffffffffffffffffffffffffffffff908181167fffffffffffffffffffffffff000000000000000000000000000000000000000084541617835516827fac803f2d7baf8977db614b92886816b923ee887c90ce5949164b63d8700f8ec45f80a36001810154908115611f1b577f37a5dc96283c260ba952c99b4383003a337bb17cafd9416409ae55b9ca7fd60e916040916125846125377f000000000000000000000000000000000000000000000000000000000000000042611895565b82547fffffffff0000000000000000ffffffffffffffffffffffffffffffffffffffff1660a082901b7bffffffffffffffff00000000000000000000000000000000000000001617909255565b82519182526020820152a2565b9792909691959394968815611b8f5773ffffffffffffffffffffffffffffffffffffffff169788156127f3578742116127cb57885f52600360205260405f20875f528060205260ff60405f2054166127a357875f5260205260405f2060017fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff008254161790557f7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0841161277057612645611bb7565b9061264f876117bb565b9761265d604051998a61174d565b87895260208901993689860111611182578a5f9a8b60208c819f9d60ff9a60809f3783010152519020604051928c8401947fee28629e3ad1e1e66bdd2da37883f39a7c56feb9a368ab965e44c9403dfbc5d5865260408501528d60608501528a84015260a083015260c082015260c081526126d960e08261174d565b51902060405190898201927f19010000000000000000000000000000000000000000000000000000000000008452602283015260428201526042815261272060628261174d565b5190209360405194855216868401526040830152606082015282805260015afa156111775773ffffffffffffffffffffffffffffffffffffffff5f5116908115918215612798575b505061277057565b7f5cd5d233000000000000000000000000000000000000000000000000000000005f5260045ffd5b141590505f80612768565b7f31626e8c000000000000000000000000000000000000000000000000000000005f5260045ffd5b7f0ebfed9e000000000000000000000000000000000000000000000000000000005f5260045ffd5b7fd92e233d000000000000000000000000000000000000000000000000000000005f5260045ffd5b6002019073ffffffffffffffffffffffffffffffffffffffff825416918215611f1b5780547fffffffff000000000000000000000000000000000000000000000000000000001690557f5b95a12da0d8f11a0616d908fa8bd8f581f165119d63a05665ada352b9f60cbe5f80a3565b5f80916020815191018273ffffffffffffffffffffffffffffffffffffffff7f0000000000000000000000000000000000000000000000000000000000000000165af13d15612964573d906128de826117bb565b916128ec604051938461174d565b82523d5f602084013e5b1561295c578051908115159182612938575b505061291057565b7f90b8ec18000000000000000000000000000000000000000000000000000000005f5260045ffd5b81925090602091810103126111825760200151801590811503611182575f80612908565b602081519101fd5b6060906128f656fea164736f6c634300081c000a",
}

// SettleflowSettlement is an auto generated Go binding around an Ethereum contract.
type SettleflowSettlement struct {
	abi abi.ABI
}

// GetABI returns the ABI associated with this contract binding.
func (c *SettleflowSettlement) GetABI() abi.ABI {
	return c.abi
}

// NewSettleflowSettlement creates a new instance of SettleflowSettlement.
func NewSettleflowSettlement() *SettleflowSettlement {
	parsed, err := SettleflowSettlementMetaData.ParseABI()
	if err != nil {
		panic(errors.New("invalid ABI: " + err.Error()))
	}
	return &SettleflowSettlement{abi: *parsed}
}

// Instance creates a wrapper for a deployed contract instance at the given address.
// Use this to create the instance object passed to abigen v2 library functions Call, Transact, etc.
func (c *SettleflowSettlement) Instance(backend bind.ContractBackend, addr common.Address) *bind.BoundContract {
	return bind.NewBoundContract(addr, c.abi, backend, backend, backend)
}

// PackConstructor is the Go binding used to pack the parameters required for
// contract deployment.
//
// Solidity: constructor(address token_, address payee_, address operator_, uint256 unit_, uint256 withdrawalNotice_) returns()
func (settleflowSettlement *SettleflowSettlement) PackConstructor(token_ common.Address, payee_ common.Address, operator_ common.Address, unit_ *big.Int, withdrawalNotice_ *big.Int) []byte {
	enc, err := settleflowSettlement.abi.Pack("", token_, payee_, operator_, unit_, withdrawalNotice_)
	if err != nil {
		panic(err)
	}
	return enc
}

// PackDOMAINSEPARATOR is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x3644e515.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function DOMAIN_SEPARATOR() view returns(bytes32)
func (settleflowSettlement *SettleflowSettlement) PackDOMAINSEPARATOR() []byte {
	enc, err := settleflowSettlement.abi.Pack("DOMAIN_SEPARATOR")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackDOMAINSEPARATOR is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x3644e515.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function DOMAIN_SEPARATOR() view returns(bytes32)
func (settleflowSettlement *SettleflowSettlement) TryPackDOMAINSEPARATOR() ([]byte, error) {
	return settleflowSettlement.abi.Pack("DOMAIN_SEPARATOR")
}

// UnpackDOMAINSEPARATOR is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x3644e515.
//
// Solidity: function DOMAIN_SEPARATOR() view returns(bytes32)
func (settleflowSettlement *SettleflowSettlement) UnpackDOMAINSEPARATOR(data []byte) ([32]byte, error) {
	out, err := settleflowSettlement.abi.Unpack("DOMAIN_SEPARATOR", data)
	if err != nil {
		return *new([32]byte), err
	}
	out0 := *abi.ConvertType(out[0], new([32]byte)).(*[32]byte)
	return out0, nil
}

// PackOWNERGRANTTYPEHASH is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x70738c8d.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function OWNER_GRANT_TYPEHASH() view returns(bytes32)
func (settleflowSettlement *SettleflowSettlement) PackOWNERGRANTTYPEHASH() []byte {
	enc, err := settleflowSettlement.abi.Pack("OWNER_GRANT_TYPEHASH")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackOWNERGRANTTYPEHASH is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x70738c8d.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function OWNER_GRANT_TYPEHASH() view returns(bytes32)
func (settleflowSettlement *SettleflowSettlement) TryPackOWNERGRANTTYPEHASH() ([]byte, error) {
	return settleflowSettlement.abi.Pack("OWNER_GRANT_TYPEHASH")
}

// UnpackOWNERGRANTTYPEHASH is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x70738c8d.
//
// Solidity: function OWNER_GRANT_TYPEHASH() view returns(bytes32)
func (settleflowSettlement *SettleflowSettlement) UnpackOWNERGRANTTYPEHASH(data []byte) ([32]byte, error) {
	out, err := settleflowSettlement.abi.Unpack("OWNER_GRANT_TYPEHASH", data)
	if err != nil {
		return *new([32]byte), err
	}
	out0 := *abi.ConvertType(out[0], new([32]byte)).(*[32]byte)
	return out0, nil
}

// PackAccount is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x882358ae.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function account(bytes32 ref) view returns(address owner_, uint256 balance, uint256 pending, uint256 availableAt)
func (settleflowSettlement *SettleflowSettlement) PackAccount(ref [32]byte) []byte {
	enc, err := settleflowSettlement.abi.Pack("account", ref)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackAccount is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x882358ae.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function account(bytes32 ref) view returns(address owner_, uint256 balance, uint256 pending, uint256 availableAt)
func (settleflowSettlement *SettleflowSettlement) TryPackAccount(ref [32]byte) ([]byte, error) {
	return settleflowSettlement.abi.Pack("account", ref)
}

// AccountOutput serves as a container for the return parameters of contract
// method Account.
type AccountOutput struct {
	Owner       common.Address
	Balance     *big.Int
	Pending     *big.Int
	AvailableAt *big.Int
}

// UnpackAccount is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x882358ae.
//
// Solidity: function account(bytes32 ref) view returns(address owner_, uint256 balance, uint256 pending, uint256 availableAt)
func (settleflowSettlement *SettleflowSettlement) UnpackAccount(data []byte) (AccountOutput, error) {
	out, err := settleflowSettlement.abi.Unpack("account", data)
	outstruct := new(AccountOutput)
	if err != nil {
		return *outstruct, err
	}
	outstruct.Owner = *abi.ConvertType(out[0], new(common.Address)).(*common.Address)
	outstruct.Balance = abi.ConvertType(out[1], new(big.Int)).(*big.Int)
	outstruct.Pending = abi.ConvertType(out[2], new(big.Int)).(*big.Int)
	outstruct.AvailableAt = abi.ConvertType(out[3], new(big.Int)).(*big.Int)
	return *outstruct, nil
}

// PackBalanceOf is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x6c7f1542.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function balanceOf(bytes32 ref) view returns(uint256 amount)
func (settleflowSettlement *SettleflowSettlement) PackBalanceOf(ref [32]byte) []byte {
	enc, err := settleflowSettlement.abi.Pack("balanceOf", ref)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackBalanceOf is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x6c7f1542.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function balanceOf(bytes32 ref) view returns(uint256 amount)
func (settleflowSettlement *SettleflowSettlement) TryPackBalanceOf(ref [32]byte) ([]byte, error) {
	return settleflowSettlement.abi.Pack("balanceOf", ref)
}

// UnpackBalanceOf is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x6c7f1542.
//
// Solidity: function balanceOf(bytes32 ref) view returns(uint256 amount)
func (settleflowSettlement *SettleflowSettlement) UnpackBalanceOf(data []byte) (*big.Int, error) {
	out, err := settleflowSettlement.abi.Unpack("balanceOf", data)
	if err != nil {
		return new(big.Int), err
	}
	out0 := abi.ConvertType(out[0], new(big.Int)).(*big.Int)
	return out0, nil
}

// PackCancelOwnerChange is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xd9934e82.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function cancelOwnerChange(bytes32 ref) returns()
func (settleflowSettlement *SettleflowSettlement) PackCancelOwnerChange(ref [32]byte) []byte {
	enc, err := settleflowSettlement.abi.Pack("cancelOwnerChange", ref)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackCancelOwnerChange is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xd9934e82.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function cancelOwnerChange(bytes32 ref) returns()
func (settleflowSettlement *SettleflowSettlement) TryPackCancelOwnerChange(ref [32]byte) ([]byte, error) {
	return settleflowSettlement.abi.Pack("cancelOwnerChange", ref)
}

// PackCancelWithdrawal is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x7213c5a0.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function cancelWithdrawal(bytes32 ref) returns()
func (settleflowSettlement *SettleflowSettlement) PackCancelWithdrawal(ref [32]byte) []byte {
	enc, err := settleflowSettlement.abi.Pack("cancelWithdrawal", ref)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackCancelWithdrawal is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x7213c5a0.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function cancelWithdrawal(bytes32 ref) returns()
func (settleflowSettlement *SettleflowSettlement) TryPackCancelWithdrawal(ref [32]byte) ([]byte, error) {
	return settleflowSettlement.abi.Pack("cancelWithdrawal", ref)
}

// PackChangeOwner is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xc98e5af7.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function changeOwner(bytes32 ref, address next, bytes32 nonce, string origin, uint256 deadline, uint8 v, bytes32 r, bytes32 s) returns()
func (settleflowSettlement *SettleflowSettlement) PackChangeOwner(ref [32]byte, next common.Address, nonce [32]byte, origin string, deadline *big.Int, v uint8, r [32]byte, s [32]byte) []byte {
	enc, err := settleflowSettlement.abi.Pack("changeOwner", ref, next, nonce, origin, deadline, v, r, s)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackChangeOwner is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xc98e5af7.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function changeOwner(bytes32 ref, address next, bytes32 nonce, string origin, uint256 deadline, uint8 v, bytes32 r, bytes32 s) returns()
func (settleflowSettlement *SettleflowSettlement) TryPackChangeOwner(ref [32]byte, next common.Address, nonce [32]byte, origin string, deadline *big.Int, v uint8, r [32]byte, s [32]byte) ([]byte, error) {
	return settleflowSettlement.abi.Pack("changeOwner", ref, next, nonce, origin, deadline, v, r, s)
}

// PackClaim is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x4e71d92d.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function claim() returns(uint256 amount)
func (settleflowSettlement *SettleflowSettlement) PackClaim() []byte {
	enc, err := settleflowSettlement.abi.Pack("claim")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackClaim is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x4e71d92d.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function claim() returns(uint256 amount)
func (settleflowSettlement *SettleflowSettlement) TryPackClaim() ([]byte, error) {
	return settleflowSettlement.abi.Pack("claim")
}

// UnpackClaim is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x4e71d92d.
//
// Solidity: function claim() returns(uint256 amount)
func (settleflowSettlement *SettleflowSettlement) UnpackClaim(data []byte) (*big.Int, error) {
	out, err := settleflowSettlement.abi.Unpack("claim", data)
	if err != nil {
		return new(big.Int), err
	}
	out0 := abi.ConvertType(out[0], new(big.Int)).(*big.Int)
	return out0, nil
}

// PackCompleteOwnerChange is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xb60aec47.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function completeOwnerChange(bytes32 ref) returns()
func (settleflowSettlement *SettleflowSettlement) PackCompleteOwnerChange(ref [32]byte) []byte {
	enc, err := settleflowSettlement.abi.Pack("completeOwnerChange", ref)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackCompleteOwnerChange is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xb60aec47.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function completeOwnerChange(bytes32 ref) returns()
func (settleflowSettlement *SettleflowSettlement) TryPackCompleteOwnerChange(ref [32]byte) ([]byte, error) {
	return settleflowSettlement.abi.Pack("completeOwnerChange", ref)
}

// PackDeclined is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x2cf43492.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function declined(uint256 sequence) view returns(bool)
func (settleflowSettlement *SettleflowSettlement) PackDeclined(sequence *big.Int) []byte {
	enc, err := settleflowSettlement.abi.Pack("declined", sequence)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackDeclined is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x2cf43492.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function declined(uint256 sequence) view returns(bool)
func (settleflowSettlement *SettleflowSettlement) TryPackDeclined(sequence *big.Int) ([]byte, error) {
	return settleflowSettlement.abi.Pack("declined", sequence)
}

// UnpackDeclined is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x2cf43492.
//
// Solidity: function declined(uint256 sequence) view returns(bool)
func (settleflowSettlement *SettleflowSettlement) UnpackDeclined(data []byte) (bool, error) {
	out, err := settleflowSettlement.abi.Unpack("declined", data)
	if err != nil {
		return *new(bool), err
	}
	out0 := *abi.ConvertType(out[0], new(bool)).(*bool)
	return out0, nil
}

// PackDeclinedWords is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xc835607c.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function declinedWords(uint256 word) view returns(uint256 bits)
func (settleflowSettlement *SettleflowSettlement) PackDeclinedWords(word *big.Int) []byte {
	enc, err := settleflowSettlement.abi.Pack("declinedWords", word)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackDeclinedWords is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xc835607c.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function declinedWords(uint256 word) view returns(uint256 bits)
func (settleflowSettlement *SettleflowSettlement) TryPackDeclinedWords(word *big.Int) ([]byte, error) {
	return settleflowSettlement.abi.Pack("declinedWords", word)
}

// UnpackDeclinedWords is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xc835607c.
//
// Solidity: function declinedWords(uint256 word) view returns(uint256 bits)
func (settleflowSettlement *SettleflowSettlement) UnpackDeclinedWords(data []byte) (*big.Int, error) {
	out, err := settleflowSettlement.abi.Unpack("declinedWords", data)
	if err != nil {
		return new(big.Int), err
	}
	out0 := abi.ConvertType(out[0], new(big.Int)).(*big.Int)
	return out0, nil
}

// PackDeployedAt is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xeae4c19f.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function deployedAt() view returns(uint256)
func (settleflowSettlement *SettleflowSettlement) PackDeployedAt() []byte {
	enc, err := settleflowSettlement.abi.Pack("deployedAt")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackDeployedAt is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xeae4c19f.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function deployedAt() view returns(uint256)
func (settleflowSettlement *SettleflowSettlement) TryPackDeployedAt() ([]byte, error) {
	return settleflowSettlement.abi.Pack("deployedAt")
}

// UnpackDeployedAt is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xeae4c19f.
//
// Solidity: function deployedAt() view returns(uint256)
func (settleflowSettlement *SettleflowSettlement) UnpackDeployedAt(data []byte) (*big.Int, error) {
	out, err := settleflowSettlement.abi.Unpack("deployedAt", data)
	if err != nil {
		return new(big.Int), err
	}
	out0 := abi.ConvertType(out[0], new(big.Int)).(*big.Int)
	return out0, nil
}

// PackDeposit is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xd954863c.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function deposit(bytes32 ref, address owner_, uint256 amount) returns()
func (settleflowSettlement *SettleflowSettlement) PackDeposit(ref [32]byte, owner common.Address, amount *big.Int) []byte {
	enc, err := settleflowSettlement.abi.Pack("deposit", ref, owner, amount)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackDeposit is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xd954863c.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function deposit(bytes32 ref, address owner_, uint256 amount) returns()
func (settleflowSettlement *SettleflowSettlement) TryPackDeposit(ref [32]byte, owner common.Address, amount *big.Int) ([]byte, error) {
	return settleflowSettlement.abi.Pack("deposit", ref, owner, amount)
}

// PackDepositWithAuthorization is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x4134d402.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function depositWithAuthorization(bytes32 ref, address owner_, address from, uint256 amount, uint256 validAfter, uint256 validBefore, bytes32 salt, uint8 v, bytes32 r, bytes32 s) returns()
func (settleflowSettlement *SettleflowSettlement) PackDepositWithAuthorization(ref [32]byte, owner common.Address, from common.Address, amount *big.Int, validAfter *big.Int, validBefore *big.Int, salt [32]byte, v uint8, r [32]byte, s [32]byte) []byte {
	enc, err := settleflowSettlement.abi.Pack("depositWithAuthorization", ref, owner, from, amount, validAfter, validBefore, salt, v, r, s)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackDepositWithAuthorization is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x4134d402.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function depositWithAuthorization(bytes32 ref, address owner_, address from, uint256 amount, uint256 validAfter, uint256 validBefore, bytes32 salt, uint8 v, bytes32 r, bytes32 s) returns()
func (settleflowSettlement *SettleflowSettlement) TryPackDepositWithAuthorization(ref [32]byte, owner common.Address, from common.Address, amount *big.Int, validAfter *big.Int, validBefore *big.Int, salt [32]byte, v uint8, r [32]byte, s [32]byte) ([]byte, error) {
	return settleflowSettlement.abi.Pack("depositWithAuthorization", ref, owner, from, amount, validAfter, validBefore, salt, v, r, s)
}

// PackFundPayee is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x4c383cfd.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function fundPayee(uint256 amount) returns()
func (settleflowSettlement *SettleflowSettlement) PackFundPayee(amount *big.Int) []byte {
	enc, err := settleflowSettlement.abi.Pack("fundPayee", amount)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackFundPayee is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x4c383cfd.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function fundPayee(uint256 amount) returns()
func (settleflowSettlement *SettleflowSettlement) TryPackFundPayee(amount *big.Int) ([]byte, error) {
	return settleflowSettlement.abi.Pack("fundPayee", amount)
}

// PackGrantUsed is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xa5f58c84.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function grantUsed(address signer, bytes32 nonce) view returns(bool used)
func (settleflowSettlement *SettleflowSettlement) PackGrantUsed(signer common.Address, nonce [32]byte) []byte {
	enc, err := settleflowSettlement.abi.Pack("grantUsed", signer, nonce)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackGrantUsed is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xa5f58c84.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function grantUsed(address signer, bytes32 nonce) view returns(bool used)
func (settleflowSettlement *SettleflowSettlement) TryPackGrantUsed(signer common.Address, nonce [32]byte) ([]byte, error) {
	return settleflowSettlement.abi.Pack("grantUsed", signer, nonce)
}

// UnpackGrantUsed is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xa5f58c84.
//
// Solidity: function grantUsed(address signer, bytes32 nonce) view returns(bool used)
func (settleflowSettlement *SettleflowSettlement) UnpackGrantUsed(data []byte) (bool, error) {
	out, err := settleflowSettlement.abi.Unpack("grantUsed", data)
	if err != nil {
		return *new(bool), err
	}
	out0 := *abi.ConvertType(out[0], new(bool)).(*bool)
	return out0, nil
}

// PackOperator is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x570ca735.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function operator() view returns(address)
func (settleflowSettlement *SettleflowSettlement) PackOperator() []byte {
	enc, err := settleflowSettlement.abi.Pack("operator")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackOperator is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x570ca735.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function operator() view returns(address)
func (settleflowSettlement *SettleflowSettlement) TryPackOperator() ([]byte, error) {
	return settleflowSettlement.abi.Pack("operator")
}

// UnpackOperator is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x570ca735.
//
// Solidity: function operator() view returns(address)
func (settleflowSettlement *SettleflowSettlement) UnpackOperator(data []byte) (common.Address, error) {
	out, err := settleflowSettlement.abi.Unpack("operator", data)
	if err != nil {
		return *new(common.Address), err
	}
	out0 := *abi.ConvertType(out[0], new(common.Address)).(*common.Address)
	return out0, nil
}

// PackOwner is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x8da5cb5b.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function owner() view returns(address)
func (settleflowSettlement *SettleflowSettlement) PackOwner() []byte {
	enc, err := settleflowSettlement.abi.Pack("owner")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackOwner is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x8da5cb5b.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function owner() view returns(address)
func (settleflowSettlement *SettleflowSettlement) TryPackOwner() ([]byte, error) {
	return settleflowSettlement.abi.Pack("owner")
}

// UnpackOwner is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x8da5cb5b.
//
// Solidity: function owner() view returns(address)
func (settleflowSettlement *SettleflowSettlement) UnpackOwner(data []byte) (common.Address, error) {
	out, err := settleflowSettlement.abi.Unpack("owner", data)
	if err != nil {
		return *new(common.Address), err
	}
	out0 := *abi.ConvertType(out[0], new(common.Address)).(*common.Address)
	return out0, nil
}

// PackOwnerChange is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x69296ecb.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function ownerChange(bytes32 ref) view returns(address next, uint256 effectiveAt)
func (settleflowSettlement *SettleflowSettlement) PackOwnerChange(ref [32]byte) []byte {
	enc, err := settleflowSettlement.abi.Pack("ownerChange", ref)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackOwnerChange is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x69296ecb.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function ownerChange(bytes32 ref) view returns(address next, uint256 effectiveAt)
func (settleflowSettlement *SettleflowSettlement) TryPackOwnerChange(ref [32]byte) ([]byte, error) {
	return settleflowSettlement.abi.Pack("ownerChange", ref)
}

// OwnerChangeOutput serves as a container for the return parameters of contract
// method OwnerChange.
type OwnerChangeOutput struct {
	Next        common.Address
	EffectiveAt *big.Int
}

// UnpackOwnerChange is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x69296ecb.
//
// Solidity: function ownerChange(bytes32 ref) view returns(address next, uint256 effectiveAt)
func (settleflowSettlement *SettleflowSettlement) UnpackOwnerChange(data []byte) (OwnerChangeOutput, error) {
	out, err := settleflowSettlement.abi.Unpack("ownerChange", data)
	outstruct := new(OwnerChangeOutput)
	if err != nil {
		return *outstruct, err
	}
	outstruct.Next = *abi.ConvertType(out[0], new(common.Address)).(*common.Address)
	outstruct.EffectiveAt = abi.ConvertType(out[1], new(big.Int)).(*big.Int)
	return *outstruct, nil
}

// PackPayee is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xae90b213.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function payee() view returns(address)
func (settleflowSettlement *SettleflowSettlement) PackPayee() []byte {
	enc, err := settleflowSettlement.abi.Pack("payee")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackPayee is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xae90b213.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function payee() view returns(address)
func (settleflowSettlement *SettleflowSettlement) TryPackPayee() ([]byte, error) {
	return settleflowSettlement.abi.Pack("payee")
}

// UnpackPayee is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xae90b213.
//
// Solidity: function payee() view returns(address)
func (settleflowSettlement *SettleflowSettlement) UnpackPayee(data []byte) (common.Address, error) {
	out, err := settleflowSettlement.abi.Unpack("payee", data)
	if err != nil {
		return *new(common.Address), err
	}
	out0 := *abi.ConvertType(out[0], new(common.Address)).(*common.Address)
	return out0, nil
}

// PackPayeeOwed is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xba80af31.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function payeeOwed() view returns(uint256)
func (settleflowSettlement *SettleflowSettlement) PackPayeeOwed() []byte {
	enc, err := settleflowSettlement.abi.Pack("payeeOwed")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackPayeeOwed is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xba80af31.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function payeeOwed() view returns(uint256)
func (settleflowSettlement *SettleflowSettlement) TryPackPayeeOwed() ([]byte, error) {
	return settleflowSettlement.abi.Pack("payeeOwed")
}

// UnpackPayeeOwed is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xba80af31.
//
// Solidity: function payeeOwed() view returns(uint256)
func (settleflowSettlement *SettleflowSettlement) UnpackPayeeOwed(data []byte) (*big.Int, error) {
	out, err := settleflowSettlement.abi.Unpack("payeeOwed", data)
	if err != nil {
		return new(big.Int), err
	}
	out0 := abi.ConvertType(out[0], new(big.Int)).(*big.Int)
	return out0, nil
}

// PackRefund is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x399f9f34.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function refund(uint256 word, bytes32[] customers, uint256[] charges, uint256[] runs, bytes32[] keys, uint256[] items) returns()
func (settleflowSettlement *SettleflowSettlement) PackRefund(word *big.Int, customers [][32]byte, charges []*big.Int, runs []*big.Int, keys [][32]byte, items []*big.Int) []byte {
	enc, err := settleflowSettlement.abi.Pack("refund", word, customers, charges, runs, keys, items)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackRefund is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x399f9f34.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function refund(uint256 word, bytes32[] customers, uint256[] charges, uint256[] runs, bytes32[] keys, uint256[] items) returns()
func (settleflowSettlement *SettleflowSettlement) TryPackRefund(word *big.Int, customers [][32]byte, charges []*big.Int, runs []*big.Int, keys [][32]byte, items []*big.Int) ([]byte, error) {
	return settleflowSettlement.abi.Pack("refund", word, customers, charges, runs, keys, items)
}

// PackRefundState is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x612131ef.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function refundState(bytes32 key) view returns(uint256 state)
func (settleflowSettlement *SettleflowSettlement) PackRefundState(key [32]byte) []byte {
	enc, err := settleflowSettlement.abi.Pack("refundState", key)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackRefundState is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x612131ef.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function refundState(bytes32 key) view returns(uint256 state)
func (settleflowSettlement *SettleflowSettlement) TryPackRefundState(key [32]byte) ([]byte, error) {
	return settleflowSettlement.abi.Pack("refundState", key)
}

// UnpackRefundState is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x612131ef.
//
// Solidity: function refundState(bytes32 key) view returns(uint256 state)
func (settleflowSettlement *SettleflowSettlement) UnpackRefundState(data []byte) (*big.Int, error) {
	out, err := settleflowSettlement.abi.Unpack("refundState", data)
	if err != nil {
		return new(big.Int), err
	}
	out0 := abi.ConvertType(out[0], new(big.Int)).(*big.Int)
	return out0, nil
}

// PackRefundedOf is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x86cb09b8.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function refundedOf(uint256 sequence) view returns(uint256 amount)
func (settleflowSettlement *SettleflowSettlement) PackRefundedOf(sequence *big.Int) []byte {
	enc, err := settleflowSettlement.abi.Pack("refundedOf", sequence)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackRefundedOf is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x86cb09b8.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function refundedOf(uint256 sequence) view returns(uint256 amount)
func (settleflowSettlement *SettleflowSettlement) TryPackRefundedOf(sequence *big.Int) ([]byte, error) {
	return settleflowSettlement.abi.Pack("refundedOf", sequence)
}

// UnpackRefundedOf is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x86cb09b8.
//
// Solidity: function refundedOf(uint256 sequence) view returns(uint256 amount)
func (settleflowSettlement *SettleflowSettlement) UnpackRefundedOf(data []byte) (*big.Int, error) {
	out, err := settleflowSettlement.abi.Unpack("refundedOf", data)
	if err != nil {
		return new(big.Int), err
	}
	out0 := abi.ConvertType(out[0], new(big.Int)).(*big.Int)
	return out0, nil
}

// PackRequestWithdrawal is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xffc3020f.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function requestWithdrawal(bytes32 ref, uint256 amount) returns()
func (settleflowSettlement *SettleflowSettlement) PackRequestWithdrawal(ref [32]byte, amount *big.Int) []byte {
	enc, err := settleflowSettlement.abi.Pack("requestWithdrawal", ref, amount)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackRequestWithdrawal is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xffc3020f.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function requestWithdrawal(bytes32 ref, uint256 amount) returns()
func (settleflowSettlement *SettleflowSettlement) TryPackRequestWithdrawal(ref [32]byte, amount *big.Int) ([]byte, error) {
	return settleflowSettlement.abi.Pack("requestWithdrawal", ref, amount)
}

// PackSetOperator is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xb3ab15fb.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function setOperator(address next) returns()
func (settleflowSettlement *SettleflowSettlement) PackSetOperator(next common.Address) []byte {
	enc, err := settleflowSettlement.abi.Pack("setOperator", next)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackSetOperator is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xb3ab15fb.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function setOperator(address next) returns()
func (settleflowSettlement *SettleflowSettlement) TryPackSetOperator(next common.Address) ([]byte, error) {
	return settleflowSettlement.abi.Pack("setOperator", next)
}

// PackSetOwner is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xd51404ec.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function setOwner(bytes32 ref, address owner_, bytes32 nonce, string origin, uint256 deadline, uint8 v, bytes32 r, bytes32 s) returns()
func (settleflowSettlement *SettleflowSettlement) PackSetOwner(ref [32]byte, owner common.Address, nonce [32]byte, origin string, deadline *big.Int, v uint8, r [32]byte, s [32]byte) []byte {
	enc, err := settleflowSettlement.abi.Pack("setOwner", ref, owner, nonce, origin, deadline, v, r, s)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackSetOwner is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xd51404ec.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function setOwner(bytes32 ref, address owner_, bytes32 nonce, string origin, uint256 deadline, uint8 v, bytes32 r, bytes32 s) returns()
func (settleflowSettlement *SettleflowSettlement) TryPackSetOwner(ref [32]byte, owner common.Address, nonce [32]byte, origin string, deadline *big.Int, v uint8, r [32]byte, s [32]byte) ([]byte, error) {
	return settleflowSettlement.abi.Pack("setOwner", ref, owner, nonce, origin, deadline, v, r, s)
}

// PackSettle is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x3611866b.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function settle(bytes32[] customers, uint256[] charges) returns(uint256 total)
func (settleflowSettlement *SettleflowSettlement) PackSettle(customers [][32]byte, charges []*big.Int) []byte {
	enc, err := settleflowSettlement.abi.Pack("settle", customers, charges)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackSettle is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x3611866b.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function settle(bytes32[] customers, uint256[] charges) returns(uint256 total)
func (settleflowSettlement *SettleflowSettlement) TryPackSettle(customers [][32]byte, charges []*big.Int) ([]byte, error) {
	return settleflowSettlement.abi.Pack("settle", customers, charges)
}

// UnpackSettle is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x3611866b.
//
// Solidity: function settle(bytes32[] customers, uint256[] charges) returns(uint256 total)
func (settleflowSettlement *SettleflowSettlement) UnpackSettle(data []byte) (*big.Int, error) {
	out, err := settleflowSettlement.abi.Unpack("settle", data)
	if err != nil {
		return new(big.Int), err
	}
	out0 := abi.ConvertType(out[0], new(big.Int)).(*big.Int)
	return out0, nil
}

// PackSettled is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x28345780.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function settled(uint256 sequence) view returns(bool)
func (settleflowSettlement *SettleflowSettlement) PackSettled(sequence *big.Int) []byte {
	enc, err := settleflowSettlement.abi.Pack("settled", sequence)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackSettled is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x28345780.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function settled(uint256 sequence) view returns(bool)
func (settleflowSettlement *SettleflowSettlement) TryPackSettled(sequence *big.Int) ([]byte, error) {
	return settleflowSettlement.abi.Pack("settled", sequence)
}

// UnpackSettled is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x28345780.
//
// Solidity: function settled(uint256 sequence) view returns(bool)
func (settleflowSettlement *SettleflowSettlement) UnpackSettled(data []byte) (bool, error) {
	out, err := settleflowSettlement.abi.Unpack("settled", data)
	if err != nil {
		return *new(bool), err
	}
	out0 := *abi.ConvertType(out[0], new(bool)).(*bool)
	return out0, nil
}

// PackSettledWords is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x9e6897fe.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function settledWords(uint256 word) view returns(uint256 bits)
func (settleflowSettlement *SettleflowSettlement) PackSettledWords(word *big.Int) []byte {
	enc, err := settleflowSettlement.abi.Pack("settledWords", word)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackSettledWords is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x9e6897fe.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function settledWords(uint256 word) view returns(uint256 bits)
func (settleflowSettlement *SettleflowSettlement) TryPackSettledWords(word *big.Int) ([]byte, error) {
	return settleflowSettlement.abi.Pack("settledWords", word)
}

// UnpackSettledWords is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x9e6897fe.
//
// Solidity: function settledWords(uint256 word) view returns(uint256 bits)
func (settleflowSettlement *SettleflowSettlement) UnpackSettledWords(data []byte) (*big.Int, error) {
	out, err := settleflowSettlement.abi.Unpack("settledWords", data)
	if err != nil {
		return new(big.Int), err
	}
	out0 := abi.ConvertType(out[0], new(big.Int)).(*big.Int)
	return out0, nil
}

// PackToken is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xfc0c546a.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function token() view returns(address)
func (settleflowSettlement *SettleflowSettlement) PackToken() []byte {
	enc, err := settleflowSettlement.abi.Pack("token")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackToken is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xfc0c546a.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function token() view returns(address)
func (settleflowSettlement *SettleflowSettlement) TryPackToken() ([]byte, error) {
	return settleflowSettlement.abi.Pack("token")
}

// UnpackToken is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xfc0c546a.
//
// Solidity: function token() view returns(address)
func (settleflowSettlement *SettleflowSettlement) UnpackToken(data []byte) (common.Address, error) {
	out, err := settleflowSettlement.abi.Unpack("token", data)
	if err != nil {
		return *new(common.Address), err
	}
	out0 := *abi.ConvertType(out[0], new(common.Address)).(*common.Address)
	return out0, nil
}

// PackUnit is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x907af6c0.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function unit() view returns(uint256)
func (settleflowSettlement *SettleflowSettlement) PackUnit() []byte {
	enc, err := settleflowSettlement.abi.Pack("unit")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackUnit is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x907af6c0.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function unit() view returns(uint256)
func (settleflowSettlement *SettleflowSettlement) TryPackUnit() ([]byte, error) {
	return settleflowSettlement.abi.Pack("unit")
}

// UnpackUnit is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x907af6c0.
//
// Solidity: function unit() view returns(uint256)
func (settleflowSettlement *SettleflowSettlement) UnpackUnit(data []byte) (*big.Int, error) {
	out, err := settleflowSettlement.abi.Unpack("unit", data)
	if err != nil {
		return new(big.Int), err
	}
	out0 := abi.ConvertType(out[0], new(big.Int)).(*big.Int)
	return out0, nil
}

// PackVersion is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x54fd4d50.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function version() view returns(uint256)
func (settleflowSettlement *SettleflowSettlement) PackVersion() []byte {
	enc, err := settleflowSettlement.abi.Pack("version")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackVersion is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x54fd4d50.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function version() view returns(uint256)
func (settleflowSettlement *SettleflowSettlement) TryPackVersion() ([]byte, error) {
	return settleflowSettlement.abi.Pack("version")
}

// UnpackVersion is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x54fd4d50.
//
// Solidity: function version() view returns(uint256)
func (settleflowSettlement *SettleflowSettlement) UnpackVersion(data []byte) (*big.Int, error) {
	out, err := settleflowSettlement.abi.Unpack("version", data)
	if err != nil {
		return new(big.Int), err
	}
	out0 := abi.ConvertType(out[0], new(big.Int)).(*big.Int)
	return out0, nil
}

// PackWithdraw is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x8e19899e.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function withdraw(bytes32 ref) returns(uint256 amount)
func (settleflowSettlement *SettleflowSettlement) PackWithdraw(ref [32]byte) []byte {
	enc, err := settleflowSettlement.abi.Pack("withdraw", ref)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackWithdraw is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x8e19899e.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function withdraw(bytes32 ref) returns(uint256 amount)
func (settleflowSettlement *SettleflowSettlement) TryPackWithdraw(ref [32]byte) ([]byte, error) {
	return settleflowSettlement.abi.Pack("withdraw", ref)
}

// UnpackWithdraw is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x8e19899e.
//
// Solidity: function withdraw(bytes32 ref) returns(uint256 amount)
func (settleflowSettlement *SettleflowSettlement) UnpackWithdraw(data []byte) (*big.Int, error) {
	out, err := settleflowSettlement.abi.Unpack("withdraw", data)
	if err != nil {
		return new(big.Int), err
	}
	out0 := abi.ConvertType(out[0], new(big.Int)).(*big.Int)
	return out0, nil
}

// PackWithdrawalNotice is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x00a69bac.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function withdrawalNotice() view returns(uint256)
func (settleflowSettlement *SettleflowSettlement) PackWithdrawalNotice() []byte {
	enc, err := settleflowSettlement.abi.Pack("withdrawalNotice")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackWithdrawalNotice is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x00a69bac.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function withdrawalNotice() view returns(uint256)
func (settleflowSettlement *SettleflowSettlement) TryPackWithdrawalNotice() ([]byte, error) {
	return settleflowSettlement.abi.Pack("withdrawalNotice")
}

// UnpackWithdrawalNotice is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x00a69bac.
//
// Solidity: function withdrawalNotice() view returns(uint256)
func (settleflowSettlement *SettleflowSettlement) UnpackWithdrawalNotice(data []byte) (*big.Int, error) {
	out, err := settleflowSettlement.abi.Unpack("withdrawalNotice", data)
	if err != nil {
		return new(big.Int), err
	}
	out0 := abi.ConvertType(out[0], new(big.Int)).(*big.Int)
	return out0, nil
}

// PackWordCommit is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xa6b012f5.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function wordCommit(uint256 word) view returns(bytes32 chain)
func (settleflowSettlement *SettleflowSettlement) PackWordCommit(word *big.Int) []byte {
	enc, err := settleflowSettlement.abi.Pack("wordCommit", word)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackWordCommit is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xa6b012f5.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function wordCommit(uint256 word) view returns(bytes32 chain)
func (settleflowSettlement *SettleflowSettlement) TryPackWordCommit(word *big.Int) ([]byte, error) {
	return settleflowSettlement.abi.Pack("wordCommit", word)
}

// UnpackWordCommit is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xa6b012f5.
//
// Solidity: function wordCommit(uint256 word) view returns(bytes32 chain)
func (settleflowSettlement *SettleflowSettlement) UnpackWordCommit(data []byte) ([32]byte, error) {
	out, err := settleflowSettlement.abi.Unpack("wordCommit", data)
	if err != nil {
		return *new([32]byte), err
	}
	out0 := *abi.ConvertType(out[0], new([32]byte)).(*[32]byte)
	return out0, nil
}

// SettleflowSettlementAlreadySettled represents a AlreadySettled event raised by the SettleflowSettlement contract.
type SettleflowSettlementAlreadySettled struct {
	Sequence *big.Int
	Raw      *types.Log // Blockchain specific contextual infos
}

const SettleflowSettlementAlreadySettledEventName = "AlreadySettled"

// ContractEventName returns the user-defined event name.
func (SettleflowSettlementAlreadySettled) ContractEventName() string {
	return SettleflowSettlementAlreadySettledEventName
}

// UnpackAlreadySettledEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event AlreadySettled(uint256 indexed sequence)
func (settleflowSettlement *SettleflowSettlement) UnpackAlreadySettledEvent(log *types.Log) (*SettleflowSettlementAlreadySettled, error) {
	event := "AlreadySettled"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != settleflowSettlement.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(SettleflowSettlementAlreadySettled)
	if len(log.Data) > 0 {
		if err := settleflowSettlement.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range settleflowSettlement.abi.Events[event].Inputs {
		if arg.Indexed {
			indexed = append(indexed, arg)
		}
	}
	if err := abi.ParseTopics(out, indexed, log.Topics[1:]); err != nil {
		return nil, err
	}
	out.Raw = log
	return out, nil
}

// SettleflowSettlementChargeDeclined represents a ChargeDeclined event raised by the SettleflowSettlement contract.
type SettleflowSettlementChargeDeclined struct {
	Sequence    *big.Int
	CustomerRef [32]byte
	Amount      *big.Int
	Balance     *big.Int
	Raw         *types.Log // Blockchain specific contextual infos
}

const SettleflowSettlementChargeDeclinedEventName = "ChargeDeclined"

// ContractEventName returns the user-defined event name.
func (SettleflowSettlementChargeDeclined) ContractEventName() string {
	return SettleflowSettlementChargeDeclinedEventName
}

// UnpackChargeDeclinedEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event ChargeDeclined(uint256 indexed sequence, bytes32 indexed customerRef, uint256 amount, uint256 balance)
func (settleflowSettlement *SettleflowSettlement) UnpackChargeDeclinedEvent(log *types.Log) (*SettleflowSettlementChargeDeclined, error) {
	event := "ChargeDeclined"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != settleflowSettlement.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(SettleflowSettlementChargeDeclined)
	if len(log.Data) > 0 {
		if err := settleflowSettlement.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range settleflowSettlement.abi.Events[event].Inputs {
		if arg.Indexed {
			indexed = append(indexed, arg)
		}
	}
	if err := abi.ParseTopics(out, indexed, log.Topics[1:]); err != nil {
		return nil, err
	}
	out.Raw = log
	return out, nil
}

// SettleflowSettlementClaimed represents a Claimed event raised by the SettleflowSettlement contract.
type SettleflowSettlementClaimed struct {
	Payee  common.Address
	Amount *big.Int
	Raw    *types.Log // Blockchain specific contextual infos
}

const SettleflowSettlementClaimedEventName = "Claimed"

// ContractEventName returns the user-defined event name.
func (SettleflowSettlementClaimed) ContractEventName() string {
	return SettleflowSettlementClaimedEventName
}

// UnpackClaimedEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event Claimed(address indexed payee, uint256 amount)
func (settleflowSettlement *SettleflowSettlement) UnpackClaimedEvent(log *types.Log) (*SettleflowSettlementClaimed, error) {
	event := "Claimed"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != settleflowSettlement.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(SettleflowSettlementClaimed)
	if len(log.Data) > 0 {
		if err := settleflowSettlement.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range settleflowSettlement.abi.Events[event].Inputs {
		if arg.Indexed {
			indexed = append(indexed, arg)
		}
	}
	if err := abi.ParseTopics(out, indexed, log.Topics[1:]); err != nil {
		return nil, err
	}
	out.Raw = log
	return out, nil
}

// SettleflowSettlementDeposited represents a Deposited event raised by the SettleflowSettlement contract.
type SettleflowSettlementDeposited struct {
	CustomerRef [32]byte
	From        common.Address
	Amount      *big.Int
	Balance     *big.Int
	Raw         *types.Log // Blockchain specific contextual infos
}

const SettleflowSettlementDepositedEventName = "Deposited"

// ContractEventName returns the user-defined event name.
func (SettleflowSettlementDeposited) ContractEventName() string {
	return SettleflowSettlementDepositedEventName
}

// UnpackDepositedEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event Deposited(bytes32 indexed customerRef, address indexed from, uint256 amount, uint256 balance)
func (settleflowSettlement *SettleflowSettlement) UnpackDepositedEvent(log *types.Log) (*SettleflowSettlementDeposited, error) {
	event := "Deposited"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != settleflowSettlement.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(SettleflowSettlementDeposited)
	if len(log.Data) > 0 {
		if err := settleflowSettlement.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range settleflowSettlement.abi.Events[event].Inputs {
		if arg.Indexed {
			indexed = append(indexed, arg)
		}
	}
	if err := abi.ParseTopics(out, indexed, log.Topics[1:]); err != nil {
		return nil, err
	}
	out.Raw = log
	return out, nil
}

// SettleflowSettlementOperatorChanged represents a OperatorChanged event raised by the SettleflowSettlement contract.
type SettleflowSettlementOperatorChanged struct {
	Previous common.Address
	Next     common.Address
	Raw      *types.Log // Blockchain specific contextual infos
}

const SettleflowSettlementOperatorChangedEventName = "OperatorChanged"

// ContractEventName returns the user-defined event name.
func (SettleflowSettlementOperatorChanged) ContractEventName() string {
	return SettleflowSettlementOperatorChangedEventName
}

// UnpackOperatorChangedEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event OperatorChanged(address indexed previous, address indexed next)
func (settleflowSettlement *SettleflowSettlement) UnpackOperatorChangedEvent(log *types.Log) (*SettleflowSettlementOperatorChanged, error) {
	event := "OperatorChanged"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != settleflowSettlement.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(SettleflowSettlementOperatorChanged)
	if len(log.Data) > 0 {
		if err := settleflowSettlement.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range settleflowSettlement.abi.Events[event].Inputs {
		if arg.Indexed {
			indexed = append(indexed, arg)
		}
	}
	if err := abi.ParseTopics(out, indexed, log.Topics[1:]); err != nil {
		return nil, err
	}
	out.Raw = log
	return out, nil
}

// SettleflowSettlementOwnerChangeCanceled represents a OwnerChangeCanceled event raised by the SettleflowSettlement contract.
type SettleflowSettlementOwnerChangeCanceled struct {
	CustomerRef [32]byte
	Next        common.Address
	Raw         *types.Log // Blockchain specific contextual infos
}

const SettleflowSettlementOwnerChangeCanceledEventName = "OwnerChangeCanceled"

// ContractEventName returns the user-defined event name.
func (SettleflowSettlementOwnerChangeCanceled) ContractEventName() string {
	return SettleflowSettlementOwnerChangeCanceledEventName
}

// UnpackOwnerChangeCanceledEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event OwnerChangeCanceled(bytes32 indexed customerRef, address indexed next)
func (settleflowSettlement *SettleflowSettlement) UnpackOwnerChangeCanceledEvent(log *types.Log) (*SettleflowSettlementOwnerChangeCanceled, error) {
	event := "OwnerChangeCanceled"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != settleflowSettlement.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(SettleflowSettlementOwnerChangeCanceled)
	if len(log.Data) > 0 {
		if err := settleflowSettlement.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range settleflowSettlement.abi.Events[event].Inputs {
		if arg.Indexed {
			indexed = append(indexed, arg)
		}
	}
	if err := abi.ParseTopics(out, indexed, log.Topics[1:]); err != nil {
		return nil, err
	}
	out.Raw = log
	return out, nil
}

// SettleflowSettlementOwnerChangeProposed represents a OwnerChangeProposed event raised by the SettleflowSettlement contract.
type SettleflowSettlementOwnerChangeProposed struct {
	CustomerRef [32]byte
	Next        common.Address
	EffectiveAt *big.Int
	Raw         *types.Log // Blockchain specific contextual infos
}

const SettleflowSettlementOwnerChangeProposedEventName = "OwnerChangeProposed"

// ContractEventName returns the user-defined event name.
func (SettleflowSettlementOwnerChangeProposed) ContractEventName() string {
	return SettleflowSettlementOwnerChangeProposedEventName
}

// UnpackOwnerChangeProposedEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event OwnerChangeProposed(bytes32 indexed customerRef, address indexed next, uint256 effectiveAt)
func (settleflowSettlement *SettleflowSettlement) UnpackOwnerChangeProposedEvent(log *types.Log) (*SettleflowSettlementOwnerChangeProposed, error) {
	event := "OwnerChangeProposed"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != settleflowSettlement.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(SettleflowSettlementOwnerChangeProposed)
	if len(log.Data) > 0 {
		if err := settleflowSettlement.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range settleflowSettlement.abi.Events[event].Inputs {
		if arg.Indexed {
			indexed = append(indexed, arg)
		}
	}
	if err := abi.ParseTopics(out, indexed, log.Topics[1:]); err != nil {
		return nil, err
	}
	out.Raw = log
	return out, nil
}

// SettleflowSettlementOwnerSet represents a OwnerSet event raised by the SettleflowSettlement contract.
type SettleflowSettlementOwnerSet struct {
	CustomerRef [32]byte
	Owner       common.Address
	Raw         *types.Log // Blockchain specific contextual infos
}

const SettleflowSettlementOwnerSetEventName = "OwnerSet"

// ContractEventName returns the user-defined event name.
func (SettleflowSettlementOwnerSet) ContractEventName() string {
	return SettleflowSettlementOwnerSetEventName
}

// UnpackOwnerSetEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event OwnerSet(bytes32 indexed customerRef, address indexed owner)
func (settleflowSettlement *SettleflowSettlement) UnpackOwnerSetEvent(log *types.Log) (*SettleflowSettlementOwnerSet, error) {
	event := "OwnerSet"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != settleflowSettlement.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(SettleflowSettlementOwnerSet)
	if len(log.Data) > 0 {
		if err := settleflowSettlement.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range settleflowSettlement.abi.Events[event].Inputs {
		if arg.Indexed {
			indexed = append(indexed, arg)
		}
	}
	if err := abi.ParseTopics(out, indexed, log.Topics[1:]); err != nil {
		return nil, err
	}
	out.Raw = log
	return out, nil
}

// SettleflowSettlementPayeeFunded represents a PayeeFunded event raised by the SettleflowSettlement contract.
type SettleflowSettlementPayeeFunded struct {
	From   common.Address
	Amount *big.Int
	Raw    *types.Log // Blockchain specific contextual infos
}

const SettleflowSettlementPayeeFundedEventName = "PayeeFunded"

// ContractEventName returns the user-defined event name.
func (SettleflowSettlementPayeeFunded) ContractEventName() string {
	return SettleflowSettlementPayeeFundedEventName
}

// UnpackPayeeFundedEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event PayeeFunded(address indexed from, uint256 amount)
func (settleflowSettlement *SettleflowSettlement) UnpackPayeeFundedEvent(log *types.Log) (*SettleflowSettlementPayeeFunded, error) {
	event := "PayeeFunded"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != settleflowSettlement.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(SettleflowSettlementPayeeFunded)
	if len(log.Data) > 0 {
		if err := settleflowSettlement.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range settleflowSettlement.abi.Events[event].Inputs {
		if arg.Indexed {
			indexed = append(indexed, arg)
		}
	}
	if err := abi.ParseTopics(out, indexed, log.Topics[1:]); err != nil {
		return nil, err
	}
	out.Raw = log
	return out, nil
}

// SettleflowSettlementRefundRejected represents a RefundRejected event raised by the SettleflowSettlement contract.
type SettleflowSettlementRefundRejected struct {
	Key      [32]byte
	Sequence *big.Int
	Reason   *big.Int
	Raw      *types.Log // Blockchain specific contextual infos
}

const SettleflowSettlementRefundRejectedEventName = "RefundRejected"

// ContractEventName returns the user-defined event name.
func (SettleflowSettlementRefundRejected) ContractEventName() string {
	return SettleflowSettlementRefundRejectedEventName
}

// UnpackRefundRejectedEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event RefundRejected(bytes32 indexed key, uint256 indexed sequence, uint256 reason)
func (settleflowSettlement *SettleflowSettlement) UnpackRefundRejectedEvent(log *types.Log) (*SettleflowSettlementRefundRejected, error) {
	event := "RefundRejected"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != settleflowSettlement.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(SettleflowSettlementRefundRejected)
	if len(log.Data) > 0 {
		if err := settleflowSettlement.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range settleflowSettlement.abi.Events[event].Inputs {
		if arg.Indexed {
			indexed = append(indexed, arg)
		}
	}
	if err := abi.ParseTopics(out, indexed, log.Topics[1:]); err != nil {
		return nil, err
	}
	out.Raw = log
	return out, nil
}

// SettleflowSettlementRefundSkipped represents a RefundSkipped event raised by the SettleflowSettlement contract.
type SettleflowSettlementRefundSkipped struct {
	Key [32]byte
	Raw *types.Log // Blockchain specific contextual infos
}

const SettleflowSettlementRefundSkippedEventName = "RefundSkipped"

// ContractEventName returns the user-defined event name.
func (SettleflowSettlementRefundSkipped) ContractEventName() string {
	return SettleflowSettlementRefundSkippedEventName
}

// UnpackRefundSkippedEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event RefundSkipped(bytes32 indexed key)
func (settleflowSettlement *SettleflowSettlement) UnpackRefundSkippedEvent(log *types.Log) (*SettleflowSettlementRefundSkipped, error) {
	event := "RefundSkipped"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != settleflowSettlement.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(SettleflowSettlementRefundSkipped)
	if len(log.Data) > 0 {
		if err := settleflowSettlement.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range settleflowSettlement.abi.Events[event].Inputs {
		if arg.Indexed {
			indexed = append(indexed, arg)
		}
	}
	if err := abi.ParseTopics(out, indexed, log.Topics[1:]); err != nil {
		return nil, err
	}
	out.Raw = log
	return out, nil
}

// SettleflowSettlementRefunded represents a Refunded event raised by the SettleflowSettlement contract.
type SettleflowSettlementRefunded struct {
	Key         [32]byte
	Sequence    *big.Int
	CustomerRef [32]byte
	Amount      *big.Int
	Raw         *types.Log // Blockchain specific contextual infos
}

const SettleflowSettlementRefundedEventName = "Refunded"

// ContractEventName returns the user-defined event name.
func (SettleflowSettlementRefunded) ContractEventName() string {
	return SettleflowSettlementRefundedEventName
}

// UnpackRefundedEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event Refunded(bytes32 indexed key, uint256 indexed sequence, bytes32 indexed customerRef, uint256 amount)
func (settleflowSettlement *SettleflowSettlement) UnpackRefundedEvent(log *types.Log) (*SettleflowSettlementRefunded, error) {
	event := "Refunded"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != settleflowSettlement.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(SettleflowSettlementRefunded)
	if len(log.Data) > 0 {
		if err := settleflowSettlement.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range settleflowSettlement.abi.Events[event].Inputs {
		if arg.Indexed {
			indexed = append(indexed, arg)
		}
	}
	if err := abi.ParseTopics(out, indexed, log.Topics[1:]); err != nil {
		return nil, err
	}
	out.Raw = log
	return out, nil
}

// SettleflowSettlementWithdrawalCanceled represents a WithdrawalCanceled event raised by the SettleflowSettlement contract.
type SettleflowSettlementWithdrawalCanceled struct {
	CustomerRef [32]byte
	Raw         *types.Log // Blockchain specific contextual infos
}

const SettleflowSettlementWithdrawalCanceledEventName = "WithdrawalCanceled"

// ContractEventName returns the user-defined event name.
func (SettleflowSettlementWithdrawalCanceled) ContractEventName() string {
	return SettleflowSettlementWithdrawalCanceledEventName
}

// UnpackWithdrawalCanceledEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event WithdrawalCanceled(bytes32 indexed customerRef)
func (settleflowSettlement *SettleflowSettlement) UnpackWithdrawalCanceledEvent(log *types.Log) (*SettleflowSettlementWithdrawalCanceled, error) {
	event := "WithdrawalCanceled"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != settleflowSettlement.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(SettleflowSettlementWithdrawalCanceled)
	if len(log.Data) > 0 {
		if err := settleflowSettlement.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range settleflowSettlement.abi.Events[event].Inputs {
		if arg.Indexed {
			indexed = append(indexed, arg)
		}
	}
	if err := abi.ParseTopics(out, indexed, log.Topics[1:]); err != nil {
		return nil, err
	}
	out.Raw = log
	return out, nil
}

// SettleflowSettlementWithdrawalRequested represents a WithdrawalRequested event raised by the SettleflowSettlement contract.
type SettleflowSettlementWithdrawalRequested struct {
	CustomerRef [32]byte
	Amount      *big.Int
	AvailableAt *big.Int
	Raw         *types.Log // Blockchain specific contextual infos
}

const SettleflowSettlementWithdrawalRequestedEventName = "WithdrawalRequested"

// ContractEventName returns the user-defined event name.
func (SettleflowSettlementWithdrawalRequested) ContractEventName() string {
	return SettleflowSettlementWithdrawalRequestedEventName
}

// UnpackWithdrawalRequestedEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event WithdrawalRequested(bytes32 indexed customerRef, uint256 amount, uint256 availableAt)
func (settleflowSettlement *SettleflowSettlement) UnpackWithdrawalRequestedEvent(log *types.Log) (*SettleflowSettlementWithdrawalRequested, error) {
	event := "WithdrawalRequested"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != settleflowSettlement.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(SettleflowSettlementWithdrawalRequested)
	if len(log.Data) > 0 {
		if err := settleflowSettlement.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range settleflowSettlement.abi.Events[event].Inputs {
		if arg.Indexed {
			indexed = append(indexed, arg)
		}
	}
	if err := abi.ParseTopics(out, indexed, log.Topics[1:]); err != nil {
		return nil, err
	}
	out.Raw = log
	return out, nil
}

// SettleflowSettlementWithdrawn represents a Withdrawn event raised by the SettleflowSettlement contract.
type SettleflowSettlementWithdrawn struct {
	CustomerRef [32]byte
	To          common.Address
	Amount      *big.Int
	Raw         *types.Log // Blockchain specific contextual infos
}

const SettleflowSettlementWithdrawnEventName = "Withdrawn"

// ContractEventName returns the user-defined event name.
func (SettleflowSettlementWithdrawn) ContractEventName() string {
	return SettleflowSettlementWithdrawnEventName
}

// UnpackWithdrawnEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event Withdrawn(bytes32 indexed customerRef, address indexed to, uint256 amount)
func (settleflowSettlement *SettleflowSettlement) UnpackWithdrawnEvent(log *types.Log) (*SettleflowSettlementWithdrawn, error) {
	event := "Withdrawn"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != settleflowSettlement.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(SettleflowSettlementWithdrawn)
	if len(log.Data) > 0 {
		if err := settleflowSettlement.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range settleflowSettlement.abi.Events[event].Inputs {
		if arg.Indexed {
			indexed = append(indexed, arg)
		}
	}
	if err := abi.ParseTopics(out, indexed, log.Topics[1:]); err != nil {
		return nil, err
	}
	out.Raw = log
	return out, nil
}

// SettleflowSettlementWordSettled represents a WordSettled event raised by the SettleflowSettlement contract.
type SettleflowSettlementWordSettled struct {
	Word *big.Int
	Raw  *types.Log // Blockchain specific contextual infos
}

const SettleflowSettlementWordSettledEventName = "WordSettled"

// ContractEventName returns the user-defined event name.
func (SettleflowSettlementWordSettled) ContractEventName() string {
	return SettleflowSettlementWordSettledEventName
}

// UnpackWordSettledEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event WordSettled(uint256 indexed word)
func (settleflowSettlement *SettleflowSettlement) UnpackWordSettledEvent(log *types.Log) (*SettleflowSettlementWordSettled, error) {
	event := "WordSettled"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != settleflowSettlement.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(SettleflowSettlementWordSettled)
	if len(log.Data) > 0 {
		if err := settleflowSettlement.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range settleflowSettlement.abi.Events[event].Inputs {
		if arg.Indexed {
			indexed = append(indexed, arg)
		}
	}
	if err := abi.ParseTopics(out, indexed, log.Topics[1:]); err != nil {
		return nil, err
	}
	out.Raw = log
	return out, nil
}

// UnpackError attempts to decode the provided error data using user-defined
// error definitions.
func (settleflowSettlement *SettleflowSettlement) UnpackError(raw []byte) (any, error) {
	if bytes.Equal(raw[:4], settleflowSettlement.abi.Errors["BadAmount"].ID.Bytes()[:4]) {
		return settleflowSettlement.UnpackBadAmountError(raw[4:])
	}
	if bytes.Equal(raw[:4], settleflowSettlement.abi.Errors["BadCharge"].ID.Bytes()[:4]) {
		return settleflowSettlement.UnpackBadChargeError(raw[4:])
	}
	if bytes.Equal(raw[:4], settleflowSettlement.abi.Errors["BadChargeIndex"].ID.Bytes()[:4]) {
		return settleflowSettlement.UnpackBadChargeIndexError(raw[4:])
	}
	if bytes.Equal(raw[:4], settleflowSettlement.abi.Errors["BadCustomerIndex"].ID.Bytes()[:4]) {
		return settleflowSettlement.UnpackBadCustomerIndexError(raw[4:])
	}
	if bytes.Equal(raw[:4], settleflowSettlement.abi.Errors["BadSignature"].ID.Bytes()[:4]) {
		return settleflowSettlement.UnpackBadSignatureError(raw[4:])
	}
	if bytes.Equal(raw[:4], settleflowSettlement.abi.Errors["ChargeNotInWord"].ID.Bytes()[:4]) {
		return settleflowSettlement.UnpackChargeNotInWordError(raw[4:])
	}
	if bytes.Equal(raw[:4], settleflowSettlement.abi.Errors["CustomersNotSorted"].ID.Bytes()[:4]) {
		return settleflowSettlement.UnpackCustomersNotSortedError(raw[4:])
	}
	if bytes.Equal(raw[:4], settleflowSettlement.abi.Errors["GrantExpired"].ID.Bytes()[:4]) {
		return settleflowSettlement.UnpackGrantExpiredError(raw[4:])
	}
	if bytes.Equal(raw[:4], settleflowSettlement.abi.Errors["GrantUsed"].ID.Bytes()[:4]) {
		return settleflowSettlement.UnpackGrantUsedError(raw[4:])
	}
	if bytes.Equal(raw[:4], settleflowSettlement.abi.Errors["LengthMismatch"].ID.Bytes()[:4]) {
		return settleflowSettlement.UnpackLengthMismatchError(raw[4:])
	}
	if bytes.Equal(raw[:4], settleflowSettlement.abi.Errors["NoOwnerChange"].ID.Bytes()[:4]) {
		return settleflowSettlement.UnpackNoOwnerChangeError(raw[4:])
	}
	if bytes.Equal(raw[:4], settleflowSettlement.abi.Errors["NoWithdrawalPending"].ID.Bytes()[:4]) {
		return settleflowSettlement.UnpackNoWithdrawalPendingError(raw[4:])
	}
	if bytes.Equal(raw[:4], settleflowSettlement.abi.Errors["NotCustomerOwner"].ID.Bytes()[:4]) {
		return settleflowSettlement.UnpackNotCustomerOwnerError(raw[4:])
	}
	if bytes.Equal(raw[:4], settleflowSettlement.abi.Errors["NotOperator"].ID.Bytes()[:4]) {
		return settleflowSettlement.UnpackNotOperatorError(raw[4:])
	}
	if bytes.Equal(raw[:4], settleflowSettlement.abi.Errors["NotOwner"].ID.Bytes()[:4]) {
		return settleflowSettlement.UnpackNotOwnerError(raw[4:])
	}
	if bytes.Equal(raw[:4], settleflowSettlement.abi.Errors["NotPayee"].ID.Bytes()[:4]) {
		return settleflowSettlement.UnpackNotPayeeError(raw[4:])
	}
	if bytes.Equal(raw[:4], settleflowSettlement.abi.Errors["OwnerChangeNotYetDue"].ID.Bytes()[:4]) {
		return settleflowSettlement.UnpackOwnerChangeNotYetDueError(raw[4:])
	}
	if bytes.Equal(raw[:4], settleflowSettlement.abi.Errors["OwnerMismatch"].ID.Bytes()[:4]) {
		return settleflowSettlement.UnpackOwnerMismatchError(raw[4:])
	}
	if bytes.Equal(raw[:4], settleflowSettlement.abi.Errors["OwnerUnchanged"].ID.Bytes()[:4]) {
		return settleflowSettlement.UnpackOwnerUnchangedError(raw[4:])
	}
	if bytes.Equal(raw[:4], settleflowSettlement.abi.Errors["StaleCommitment"].ID.Bytes()[:4]) {
		return settleflowSettlement.UnpackStaleCommitmentError(raw[4:])
	}
	if bytes.Equal(raw[:4], settleflowSettlement.abi.Errors["TransferFailed"].ID.Bytes()[:4]) {
		return settleflowSettlement.UnpackTransferFailedError(raw[4:])
	}
	if bytes.Equal(raw[:4], settleflowSettlement.abi.Errors["WithdrawalNotYetAvailable"].ID.Bytes()[:4]) {
		return settleflowSettlement.UnpackWithdrawalNotYetAvailableError(raw[4:])
	}
	if bytes.Equal(raw[:4], settleflowSettlement.abi.Errors["ZeroAddress"].ID.Bytes()[:4]) {
		return settleflowSettlement.UnpackZeroAddressError(raw[4:])
	}
	if bytes.Equal(raw[:4], settleflowSettlement.abi.Errors["ZeroCustomer"].ID.Bytes()[:4]) {
		return settleflowSettlement.UnpackZeroCustomerError(raw[4:])
	}
	if bytes.Equal(raw[:4], settleflowSettlement.abi.Errors["ZeroKey"].ID.Bytes()[:4]) {
		return settleflowSettlement.UnpackZeroKeyError(raw[4:])
	}
	if bytes.Equal(raw[:4], settleflowSettlement.abi.Errors["ZeroSequence"].ID.Bytes()[:4]) {
		return settleflowSettlement.UnpackZeroSequenceError(raw[4:])
	}
	return nil, errors.New("Unknown error")
}

// SettleflowSettlementBadAmount represents a BadAmount error raised by the SettleflowSettlement contract.
type SettleflowSettlementBadAmount struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error BadAmount()
func SettleflowSettlementBadAmountErrorID() common.Hash {
	return common.HexToHash("0x749b593924416ea8f46d8a8f5b89dfc2a554f6cc168b31407d6be5e73a078ac0")
}

// UnpackBadAmountError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error BadAmount()
func (settleflowSettlement *SettleflowSettlement) UnpackBadAmountError(raw []byte) (*SettleflowSettlementBadAmount, error) {
	out := new(SettleflowSettlementBadAmount)
	if err := settleflowSettlement.abi.UnpackIntoInterface(out, "BadAmount", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// SettleflowSettlementBadCharge represents a BadCharge error raised by the SettleflowSettlement contract.
type SettleflowSettlementBadCharge struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error BadCharge()
func SettleflowSettlementBadChargeErrorID() common.Hash {
	return common.HexToHash("0x7214059a5232204270778647c3141ef1769eb083544b3a6d252b3aadf4e6b804")
}

// UnpackBadChargeError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error BadCharge()
func (settleflowSettlement *SettleflowSettlement) UnpackBadChargeError(raw []byte) (*SettleflowSettlementBadCharge, error) {
	out := new(SettleflowSettlementBadCharge)
	if err := settleflowSettlement.abi.UnpackIntoInterface(out, "BadCharge", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// SettleflowSettlementBadChargeIndex represents a BadChargeIndex error raised by the SettleflowSettlement contract.
type SettleflowSettlementBadChargeIndex struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error BadChargeIndex()
func SettleflowSettlementBadChargeIndexErrorID() common.Hash {
	return common.HexToHash("0x9c511c25ff50914a302c0cf3289c2fadb35a196f38a8cb4293cdb2809625a480")
}

// UnpackBadChargeIndexError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error BadChargeIndex()
func (settleflowSettlement *SettleflowSettlement) UnpackBadChargeIndexError(raw []byte) (*SettleflowSettlementBadChargeIndex, error) {
	out := new(SettleflowSettlementBadChargeIndex)
	if err := settleflowSettlement.abi.UnpackIntoInterface(out, "BadChargeIndex", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// SettleflowSettlementBadCustomerIndex represents a BadCustomerIndex error raised by the SettleflowSettlement contract.
type SettleflowSettlementBadCustomerIndex struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error BadCustomerIndex()
func SettleflowSettlementBadCustomerIndexErrorID() common.Hash {
	return common.HexToHash("0x22f787fc02dd5e57bb36a325cf77d223e16dd900d79e3c1690b08b9bcefeb100")
}

// UnpackBadCustomerIndexError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error BadCustomerIndex()
func (settleflowSettlement *SettleflowSettlement) UnpackBadCustomerIndexError(raw []byte) (*SettleflowSettlementBadCustomerIndex, error) {
	out := new(SettleflowSettlementBadCustomerIndex)
	if err := settleflowSettlement.abi.UnpackIntoInterface(out, "BadCustomerIndex", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// SettleflowSettlementBadSignature represents a BadSignature error raised by the SettleflowSettlement contract.
type SettleflowSettlementBadSignature struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error BadSignature()
func SettleflowSettlementBadSignatureErrorID() common.Hash {
	return common.HexToHash("0x5cd5d2335541c4f2ed05fbe44f397e8b79f8e2333157122d2dab06e378ef7685")
}

// UnpackBadSignatureError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error BadSignature()
func (settleflowSettlement *SettleflowSettlement) UnpackBadSignatureError(raw []byte) (*SettleflowSettlementBadSignature, error) {
	out := new(SettleflowSettlementBadSignature)
	if err := settleflowSettlement.abi.UnpackIntoInterface(out, "BadSignature", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// SettleflowSettlementChargeNotInWord represents a ChargeNotInWord error raised by the SettleflowSettlement contract.
type SettleflowSettlementChargeNotInWord struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error ChargeNotInWord()
func SettleflowSettlementChargeNotInWordErrorID() common.Hash {
	return common.HexToHash("0x237d5ec2f01d969e519e7b47dc8e31c91a4b8c0ab2c2adeef9abfc512eed6e72")
}

// UnpackChargeNotInWordError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error ChargeNotInWord()
func (settleflowSettlement *SettleflowSettlement) UnpackChargeNotInWordError(raw []byte) (*SettleflowSettlementChargeNotInWord, error) {
	out := new(SettleflowSettlementChargeNotInWord)
	if err := settleflowSettlement.abi.UnpackIntoInterface(out, "ChargeNotInWord", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// SettleflowSettlementCustomersNotSorted represents a CustomersNotSorted error raised by the SettleflowSettlement contract.
type SettleflowSettlementCustomersNotSorted struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error CustomersNotSorted()
func SettleflowSettlementCustomersNotSortedErrorID() common.Hash {
	return common.HexToHash("0xc84ea9a53990136e2c0b72371c57359988da52b22f3b93a720edebecbd800175")
}

// UnpackCustomersNotSortedError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error CustomersNotSorted()
func (settleflowSettlement *SettleflowSettlement) UnpackCustomersNotSortedError(raw []byte) (*SettleflowSettlementCustomersNotSorted, error) {
	out := new(SettleflowSettlementCustomersNotSorted)
	if err := settleflowSettlement.abi.UnpackIntoInterface(out, "CustomersNotSorted", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// SettleflowSettlementGrantExpired represents a GrantExpired error raised by the SettleflowSettlement contract.
type SettleflowSettlementGrantExpired struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error GrantExpired()
func SettleflowSettlementGrantExpiredErrorID() common.Hash {
	return common.HexToHash("0x0ebfed9eca5f0d63b0171863551637ca8d2d3aeeb5c157d495a1bbb01c8dd8e2")
}

// UnpackGrantExpiredError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error GrantExpired()
func (settleflowSettlement *SettleflowSettlement) UnpackGrantExpiredError(raw []byte) (*SettleflowSettlementGrantExpired, error) {
	out := new(SettleflowSettlementGrantExpired)
	if err := settleflowSettlement.abi.UnpackIntoInterface(out, "GrantExpired", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// SettleflowSettlementGrantUsed represents a GrantUsed error raised by the SettleflowSettlement contract.
type SettleflowSettlementGrantUsed struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error GrantUsed()
func SettleflowSettlementGrantUsedErrorID() common.Hash {
	return common.HexToHash("0x31626e8c3e9d4419c0c33cb52b5b45e4696eb36e6ab657433fbc8e6625e07b5b")
}

// UnpackGrantUsedError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error GrantUsed()
func (settleflowSettlement *SettleflowSettlement) UnpackGrantUsedError(raw []byte) (*SettleflowSettlementGrantUsed, error) {
	out := new(SettleflowSettlementGrantUsed)
	if err := settleflowSettlement.abi.UnpackIntoInterface(out, "GrantUsed", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// SettleflowSettlementLengthMismatch represents a LengthMismatch error raised by the SettleflowSettlement contract.
type SettleflowSettlementLengthMismatch struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error LengthMismatch()
func SettleflowSettlementLengthMismatchErrorID() common.Hash {
	return common.HexToHash("0xff633a3803c58b9bc21e58efecee59f27e033cc0b1883fccb4969c76146fe60f")
}

// UnpackLengthMismatchError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error LengthMismatch()
func (settleflowSettlement *SettleflowSettlement) UnpackLengthMismatchError(raw []byte) (*SettleflowSettlementLengthMismatch, error) {
	out := new(SettleflowSettlementLengthMismatch)
	if err := settleflowSettlement.abi.UnpackIntoInterface(out, "LengthMismatch", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// SettleflowSettlementNoOwnerChange represents a NoOwnerChange error raised by the SettleflowSettlement contract.
type SettleflowSettlementNoOwnerChange struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error NoOwnerChange()
func SettleflowSettlementNoOwnerChangeErrorID() common.Hash {
	return common.HexToHash("0xc04089e6b051a419c390b7b07bf90f5944e00ec9eb8b3aad2e3fd7bb912d6a98")
}

// UnpackNoOwnerChangeError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error NoOwnerChange()
func (settleflowSettlement *SettleflowSettlement) UnpackNoOwnerChangeError(raw []byte) (*SettleflowSettlementNoOwnerChange, error) {
	out := new(SettleflowSettlementNoOwnerChange)
	if err := settleflowSettlement.abi.UnpackIntoInterface(out, "NoOwnerChange", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// SettleflowSettlementNoWithdrawalPending represents a NoWithdrawalPending error raised by the SettleflowSettlement contract.
type SettleflowSettlementNoWithdrawalPending struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error NoWithdrawalPending()
func SettleflowSettlementNoWithdrawalPendingErrorID() common.Hash {
	return common.HexToHash("0x83e89493528a5ac4311772b32298a7b8aaf9a7681541a161203ef9bb79015d4d")
}

// UnpackNoWithdrawalPendingError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error NoWithdrawalPending()
func (settleflowSettlement *SettleflowSettlement) UnpackNoWithdrawalPendingError(raw []byte) (*SettleflowSettlementNoWithdrawalPending, error) {
	out := new(SettleflowSettlementNoWithdrawalPending)
	if err := settleflowSettlement.abi.UnpackIntoInterface(out, "NoWithdrawalPending", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// SettleflowSettlementNotCustomerOwner represents a NotCustomerOwner error raised by the SettleflowSettlement contract.
type SettleflowSettlementNotCustomerOwner struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error NotCustomerOwner()
func SettleflowSettlementNotCustomerOwnerErrorID() common.Hash {
	return common.HexToHash("0x6cb4fda5fccabb3520d6b54ebb567f5f0a5c7c1376cdb74ff25ab14a760632f5")
}

// UnpackNotCustomerOwnerError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error NotCustomerOwner()
func (settleflowSettlement *SettleflowSettlement) UnpackNotCustomerOwnerError(raw []byte) (*SettleflowSettlementNotCustomerOwner, error) {
	out := new(SettleflowSettlementNotCustomerOwner)
	if err := settleflowSettlement.abi.UnpackIntoInterface(out, "NotCustomerOwner", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// SettleflowSettlementNotOperator represents a NotOperator error raised by the SettleflowSettlement contract.
type SettleflowSettlementNotOperator struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error NotOperator()
func SettleflowSettlementNotOperatorErrorID() common.Hash {
	return common.HexToHash("0x7c214f0474e418b49066b523b4b4fdaaeed28f6f33b3f87920010fb4856b27c9")
}

// UnpackNotOperatorError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error NotOperator()
func (settleflowSettlement *SettleflowSettlement) UnpackNotOperatorError(raw []byte) (*SettleflowSettlementNotOperator, error) {
	out := new(SettleflowSettlementNotOperator)
	if err := settleflowSettlement.abi.UnpackIntoInterface(out, "NotOperator", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// SettleflowSettlementNotOwner represents a NotOwner error raised by the SettleflowSettlement contract.
type SettleflowSettlementNotOwner struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error NotOwner()
func SettleflowSettlementNotOwnerErrorID() common.Hash {
	return common.HexToHash("0x30cd74712f59d478562d48e2d35de830db72c60a63dd08ae59199eec990b5bc4")
}

// UnpackNotOwnerError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error NotOwner()
func (settleflowSettlement *SettleflowSettlement) UnpackNotOwnerError(raw []byte) (*SettleflowSettlementNotOwner, error) {
	out := new(SettleflowSettlementNotOwner)
	if err := settleflowSettlement.abi.UnpackIntoInterface(out, "NotOwner", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// SettleflowSettlementNotPayee represents a NotPayee error raised by the SettleflowSettlement contract.
type SettleflowSettlementNotPayee struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error NotPayee()
func SettleflowSettlementNotPayeeErrorID() common.Hash {
	return common.HexToHash("0x56cab67b54587ad1ee1a933271cfaefb43ac75788a9ef7fc3787cd8ae7783ab4")
}

// UnpackNotPayeeError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error NotPayee()
func (settleflowSettlement *SettleflowSettlement) UnpackNotPayeeError(raw []byte) (*SettleflowSettlementNotPayee, error) {
	out := new(SettleflowSettlementNotPayee)
	if err := settleflowSettlement.abi.UnpackIntoInterface(out, "NotPayee", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// SettleflowSettlementOwnerChangeNotYetDue represents a OwnerChangeNotYetDue error raised by the SettleflowSettlement contract.
type SettleflowSettlementOwnerChangeNotYetDue struct {
	EffectiveAt *big.Int
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error OwnerChangeNotYetDue(uint256 effectiveAt)
func SettleflowSettlementOwnerChangeNotYetDueErrorID() common.Hash {
	return common.HexToHash("0x51adea60156aaafb7f6d13fe9d7c6f50befb07d5987e7fb345ecf873874d2ed8")
}

// UnpackOwnerChangeNotYetDueError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error OwnerChangeNotYetDue(uint256 effectiveAt)
func (settleflowSettlement *SettleflowSettlement) UnpackOwnerChangeNotYetDueError(raw []byte) (*SettleflowSettlementOwnerChangeNotYetDue, error) {
	out := new(SettleflowSettlementOwnerChangeNotYetDue)
	if err := settleflowSettlement.abi.UnpackIntoInterface(out, "OwnerChangeNotYetDue", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// SettleflowSettlementOwnerMismatch represents a OwnerMismatch error raised by the SettleflowSettlement contract.
type SettleflowSettlementOwnerMismatch struct {
	Recorded common.Address
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error OwnerMismatch(address recorded)
func SettleflowSettlementOwnerMismatchErrorID() common.Hash {
	return common.HexToHash("0x70e6839e8a2d4a8aa829619c510757a3abc81547f1de254b0486b582c7036f0a")
}

// UnpackOwnerMismatchError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error OwnerMismatch(address recorded)
func (settleflowSettlement *SettleflowSettlement) UnpackOwnerMismatchError(raw []byte) (*SettleflowSettlementOwnerMismatch, error) {
	out := new(SettleflowSettlementOwnerMismatch)
	if err := settleflowSettlement.abi.UnpackIntoInterface(out, "OwnerMismatch", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// SettleflowSettlementOwnerUnchanged represents a OwnerUnchanged error raised by the SettleflowSettlement contract.
type SettleflowSettlementOwnerUnchanged struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error OwnerUnchanged()
func SettleflowSettlementOwnerUnchangedErrorID() common.Hash {
	return common.HexToHash("0xdf129d24cb72e4a0dc4243067a35c3d1eab6c3bdb7737b6fb90934986d9e9e26")
}

// UnpackOwnerUnchangedError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error OwnerUnchanged()
func (settleflowSettlement *SettleflowSettlement) UnpackOwnerUnchangedError(raw []byte) (*SettleflowSettlementOwnerUnchanged, error) {
	out := new(SettleflowSettlementOwnerUnchanged)
	if err := settleflowSettlement.abi.UnpackIntoInterface(out, "OwnerUnchanged", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// SettleflowSettlementStaleCommitment represents a StaleCommitment error raised by the SettleflowSettlement contract.
type SettleflowSettlementStaleCommitment struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error StaleCommitment()
func SettleflowSettlementStaleCommitmentErrorID() common.Hash {
	return common.HexToHash("0x3d618e50240e5e66adf03ae85d51a8c5d8779d1d16a62a01162c0bf9dd05eb93")
}

// UnpackStaleCommitmentError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error StaleCommitment()
func (settleflowSettlement *SettleflowSettlement) UnpackStaleCommitmentError(raw []byte) (*SettleflowSettlementStaleCommitment, error) {
	out := new(SettleflowSettlementStaleCommitment)
	if err := settleflowSettlement.abi.UnpackIntoInterface(out, "StaleCommitment", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// SettleflowSettlementTransferFailed represents a TransferFailed error raised by the SettleflowSettlement contract.
type SettleflowSettlementTransferFailed struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error TransferFailed()
func SettleflowSettlementTransferFailedErrorID() common.Hash {
	return common.HexToHash("0x90b8ec1877afffd816d05d9b13947f3ff18ec5851c38bad15ec2b710f92391b1")
}

// UnpackTransferFailedError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error TransferFailed()
func (settleflowSettlement *SettleflowSettlement) UnpackTransferFailedError(raw []byte) (*SettleflowSettlementTransferFailed, error) {
	out := new(SettleflowSettlementTransferFailed)
	if err := settleflowSettlement.abi.UnpackIntoInterface(out, "TransferFailed", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// SettleflowSettlementWithdrawalNotYetAvailable represents a WithdrawalNotYetAvailable error raised by the SettleflowSettlement contract.
type SettleflowSettlementWithdrawalNotYetAvailable struct {
	AvailableAt *big.Int
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error WithdrawalNotYetAvailable(uint256 availableAt)
func SettleflowSettlementWithdrawalNotYetAvailableErrorID() common.Hash {
	return common.HexToHash("0x449406b522fcf8f932bb596ffa127b22fde292e27e52b9ac8cfb869bc9ef8bbb")
}

// UnpackWithdrawalNotYetAvailableError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error WithdrawalNotYetAvailable(uint256 availableAt)
func (settleflowSettlement *SettleflowSettlement) UnpackWithdrawalNotYetAvailableError(raw []byte) (*SettleflowSettlementWithdrawalNotYetAvailable, error) {
	out := new(SettleflowSettlementWithdrawalNotYetAvailable)
	if err := settleflowSettlement.abi.UnpackIntoInterface(out, "WithdrawalNotYetAvailable", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// SettleflowSettlementZeroAddress represents a ZeroAddress error raised by the SettleflowSettlement contract.
type SettleflowSettlementZeroAddress struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error ZeroAddress()
func SettleflowSettlementZeroAddressErrorID() common.Hash {
	return common.HexToHash("0xd92e233df2717d4a40030e20904abd27b68fcbeede117eaaccbbdac9618c8c73")
}

// UnpackZeroAddressError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error ZeroAddress()
func (settleflowSettlement *SettleflowSettlement) UnpackZeroAddressError(raw []byte) (*SettleflowSettlementZeroAddress, error) {
	out := new(SettleflowSettlementZeroAddress)
	if err := settleflowSettlement.abi.UnpackIntoInterface(out, "ZeroAddress", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// SettleflowSettlementZeroCustomer represents a ZeroCustomer error raised by the SettleflowSettlement contract.
type SettleflowSettlementZeroCustomer struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error ZeroCustomer()
func SettleflowSettlementZeroCustomerErrorID() common.Hash {
	return common.HexToHash("0xca0845bd977ff858b3347dbb05a13034566a0367635ae0aa447ea9ef71b74082")
}

// UnpackZeroCustomerError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error ZeroCustomer()
func (settleflowSettlement *SettleflowSettlement) UnpackZeroCustomerError(raw []byte) (*SettleflowSettlementZeroCustomer, error) {
	out := new(SettleflowSettlementZeroCustomer)
	if err := settleflowSettlement.abi.UnpackIntoInterface(out, "ZeroCustomer", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// SettleflowSettlementZeroKey represents a ZeroKey error raised by the SettleflowSettlement contract.
type SettleflowSettlementZeroKey struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error ZeroKey()
func SettleflowSettlementZeroKeyErrorID() common.Hash {
	return common.HexToHash("0xfbd849c64583c50579479efaac1ef44e6d9d78379a9ea28aa6150a3b683c09f5")
}

// UnpackZeroKeyError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error ZeroKey()
func (settleflowSettlement *SettleflowSettlement) UnpackZeroKeyError(raw []byte) (*SettleflowSettlementZeroKey, error) {
	out := new(SettleflowSettlementZeroKey)
	if err := settleflowSettlement.abi.UnpackIntoInterface(out, "ZeroKey", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// SettleflowSettlementZeroSequence represents a ZeroSequence error raised by the SettleflowSettlement contract.
type SettleflowSettlementZeroSequence struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error ZeroSequence()
func SettleflowSettlementZeroSequenceErrorID() common.Hash {
	return common.HexToHash("0x771ba714cc80fa349b5c4454776a889d402a4c615811815aa01ce62d39b8c688")
}

// UnpackZeroSequenceError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error ZeroSequence()
func (settleflowSettlement *SettleflowSettlement) UnpackZeroSequenceError(raw []byte) (*SettleflowSettlementZeroSequence, error) {
	out := new(SettleflowSettlementZeroSequence)
	if err := settleflowSettlement.abi.UnpackIntoInterface(out, "ZeroSequence", raw); err != nil {
		return nil, err
	}
	return out, nil
}
