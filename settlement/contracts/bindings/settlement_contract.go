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
	ABI: "[{\"inputs\":[{\"internalType\":\"contractIERC20\",\"name\":\"token_\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"payee_\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"operator_\",\"type\":\"address\"},{\"internalType\":\"uint256\",\"name\":\"unit_\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"withdrawalNotice_\",\"type\":\"uint256\"}],\"stateMutability\":\"nonpayable\",\"type\":\"constructor\"},{\"inputs\":[],\"name\":\"BadAmount\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"BadChargeIndex\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"BadCustomerIndex\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"ChargeNotInWord\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"CustomersNotSorted\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"LengthMismatch\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"NoWithdrawalPending\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"NotCustomerOwner\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"NotOperator\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"NotOwner\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"NotPayee\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"StaleCommitment\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"TransferFailed\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"availableAt\",\"type\":\"uint256\"}],\"name\":\"WithdrawalNotYetAvailable\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"ZeroAddress\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"ZeroCustomer\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"ZeroKey\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"ZeroSequence\",\"type\":\"error\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"uint256\",\"name\":\"sequence\",\"type\":\"uint256\"}],\"name\":\"AlreadySettled\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"uint256\",\"name\":\"sequence\",\"type\":\"uint256\"},{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"customerRef\",\"type\":\"bytes32\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"balance\",\"type\":\"uint256\"}],\"name\":\"ChargeDeclined\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"address\",\"name\":\"payee\",\"type\":\"address\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"}],\"name\":\"Claimed\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"customerRef\",\"type\":\"bytes32\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"from\",\"type\":\"address\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"balance\",\"type\":\"uint256\"}],\"name\":\"Deposited\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"address\",\"name\":\"previous\",\"type\":\"address\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"next\",\"type\":\"address\"}],\"name\":\"OperatorChanged\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"customerRef\",\"type\":\"bytes32\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"owner\",\"type\":\"address\"}],\"name\":\"OwnerSet\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"address\",\"name\":\"from\",\"type\":\"address\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"}],\"name\":\"PayeeFunded\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"key\",\"type\":\"bytes32\"},{\"indexed\":true,\"internalType\":\"uint256\",\"name\":\"sequence\",\"type\":\"uint256\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"reason\",\"type\":\"uint256\"}],\"name\":\"RefundRejected\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"key\",\"type\":\"bytes32\"}],\"name\":\"RefundSkipped\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"key\",\"type\":\"bytes32\"},{\"indexed\":true,\"internalType\":\"uint256\",\"name\":\"sequence\",\"type\":\"uint256\"},{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"customerRef\",\"type\":\"bytes32\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"}],\"name\":\"Refunded\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"customerRef\",\"type\":\"bytes32\"}],\"name\":\"WithdrawalCanceled\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"customerRef\",\"type\":\"bytes32\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"availableAt\",\"type\":\"uint256\"}],\"name\":\"WithdrawalRequested\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"customerRef\",\"type\":\"bytes32\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"to\",\"type\":\"address\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"}],\"name\":\"Withdrawn\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"uint256\",\"name\":\"word\",\"type\":\"uint256\"}],\"name\":\"WordSettled\",\"type\":\"event\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"ref\",\"type\":\"bytes32\"}],\"name\":\"account\",\"outputs\":[{\"internalType\":\"address\",\"name\":\"owner_\",\"type\":\"address\"},{\"internalType\":\"uint256\",\"name\":\"balance\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"pending\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"availableAt\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"ref\",\"type\":\"bytes32\"}],\"name\":\"balanceOf\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"ref\",\"type\":\"bytes32\"}],\"name\":\"cancelWithdrawal\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"claim\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"}],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"sequence\",\"type\":\"uint256\"}],\"name\":\"declined\",\"outputs\":[{\"internalType\":\"bool\",\"name\":\"\",\"type\":\"bool\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"word\",\"type\":\"uint256\"}],\"name\":\"declinedWords\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"bits\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"deployedAt\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"ref\",\"type\":\"bytes32\"},{\"internalType\":\"address\",\"name\":\"owner_\",\"type\":\"address\"},{\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"}],\"name\":\"deposit\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"ref\",\"type\":\"bytes32\"},{\"internalType\":\"address\",\"name\":\"owner_\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"from\",\"type\":\"address\"},{\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"validAfter\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"validBefore\",\"type\":\"uint256\"},{\"internalType\":\"bytes32\",\"name\":\"salt\",\"type\":\"bytes32\"},{\"internalType\":\"uint8\",\"name\":\"v\",\"type\":\"uint8\"},{\"internalType\":\"bytes32\",\"name\":\"r\",\"type\":\"bytes32\"},{\"internalType\":\"bytes32\",\"name\":\"s\",\"type\":\"bytes32\"}],\"name\":\"depositWithAuthorization\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"}],\"name\":\"fundPayee\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"operator\",\"outputs\":[{\"internalType\":\"address\",\"name\":\"\",\"type\":\"address\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"owner\",\"outputs\":[{\"internalType\":\"address\",\"name\":\"\",\"type\":\"address\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"payee\",\"outputs\":[{\"internalType\":\"address\",\"name\":\"\",\"type\":\"address\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"payeeOwed\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"word\",\"type\":\"uint256\"},{\"internalType\":\"bytes32[]\",\"name\":\"customers\",\"type\":\"bytes32[]\"},{\"internalType\":\"uint256[]\",\"name\":\"charges\",\"type\":\"uint256[]\"},{\"internalType\":\"uint256[]\",\"name\":\"runs\",\"type\":\"uint256[]\"},{\"internalType\":\"bytes32[]\",\"name\":\"keys\",\"type\":\"bytes32[]\"},{\"internalType\":\"uint256[]\",\"name\":\"items\",\"type\":\"uint256[]\"}],\"name\":\"refund\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"key\",\"type\":\"bytes32\"}],\"name\":\"refundState\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"state\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"sequence\",\"type\":\"uint256\"}],\"name\":\"refundedOf\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"ref\",\"type\":\"bytes32\"},{\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"}],\"name\":\"requestWithdrawal\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"next\",\"type\":\"address\"}],\"name\":\"setOperator\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32[]\",\"name\":\"customers\",\"type\":\"bytes32[]\"},{\"internalType\":\"uint256[]\",\"name\":\"charges\",\"type\":\"uint256[]\"}],\"name\":\"settle\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"total\",\"type\":\"uint256\"}],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"sequence\",\"type\":\"uint256\"}],\"name\":\"settled\",\"outputs\":[{\"internalType\":\"bool\",\"name\":\"\",\"type\":\"bool\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"word\",\"type\":\"uint256\"}],\"name\":\"settledWords\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"bits\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"token\",\"outputs\":[{\"internalType\":\"contractIERC20\",\"name\":\"\",\"type\":\"address\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"unit\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"ref\",\"type\":\"bytes32\"}],\"name\":\"withdraw\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"}],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"withdrawalNotice\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"word\",\"type\":\"uint256\"}],\"name\":\"wordCommit\",\"outputs\":[{\"internalType\":\"bytes32\",\"name\":\"chain\",\"type\":\"bytes32\"}],\"stateMutability\":\"view\",\"type\":\"function\"}]",
	ID:  "SettleflowSettlement",
	Bin: "0x610140346101b157601f61201238819003918201601f19168301916001600160401b038311848410176101b55780849260a0946040528339810103126101b15780516001600160a01b038116908181036101b15761005f602084016101c9565b61006b604085016101c9565b9160806060860151950151931580156101a0575b801561018f575b6101805784156101715760805260a0523360c05260018060a01b0316918260018060a01b03195f5416175f5560e052610100524361012052604051905f7fd58299b712891143e76310d5e664c4203c940a67db37cf856bdaa3c5c76a802c8180a3611e3490816101de823960805181818161030901528181610c610152611d66015260a0518181816105450152610a1f015260c05181818161043201526107c8015260e05181818161027c015281816105d501528181610b890152818161176d0152818161189a0152611c520152610100518181816101c9015261119f015261012051816103450152f35b63749b593960e01b5f5260045ffd5b63d92e233d60e01b5f5260045ffd5b506001600160a01b03831615610086565b506001600160a01b0382161561007f565b5f80fd5b634e487b7160e01b5f52604160045260245ffd5b51906001600160a01b03821682036101b15756fe6080806040526004361015610012575f80fd5b5f905f3560e01c908162a69bac1461118a5750806328345780146111535780632cf434921461111c5780633611866b146110b4578063399f9f3414610d335780634134d40214610bb55780634c383cfd14610af15780634e71d92d14610a0c578063570ca735146109d9578063612131ef146109af5780636c7f1542146109855780637213c5a01461088757806386cb09b81461085d578063882358ae146107ec5780638da5cb5b1461079b5780638e19899e146105f8578063907af6c0146105bd5780639e6897fe14610593578063a6b012f514610569578063ae90b21314610518578063b3ab15fb146103e8578063ba80af31146103ca578063c835607c146103a0578063d954863c14610368578063eae4c19f1461032d578063fc0c546a146102dc5763ffc3020f14610146575f80fd5b346102d95760406003193601126102d95760043560243581835260026020526040832073ffffffffffffffffffffffffffffffffffffffff815416803314908115916102d0575b506102a85781158015610276575b61024e577f37a5dc96283c260ba952c99b4383003a337bb17cafd9416409ae55b9ca7fd60e916040916101ee7f00000000000000000000000000000000000000000000000000000000000000004261135d565b6001820183905581547fffffffff0000000000000000ffffffffffffffffffffffffffffffffffffffff1660a082901b7bffffffffffffffff0000000000000000000000000000000000000000161790915582519182526020820152a280f35b6004847f749b5939000000000000000000000000000000000000000000000000000000008152fd5b506102a17f000000000000000000000000000000000000000000000000000000000000000083611661565b151561019b565b6004847f6cb4fda5000000000000000000000000000000000000000000000000000000008152fd5b9050155f61018d565b80fd5b50346102d957806003193601126102d957602060405173ffffffffffffffffffffffffffffffffffffffff7f0000000000000000000000000000000000000000000000000000000000000000168152f35b50346102d957806003193601126102d95760206040517f00000000000000000000000000000000000000000000000000000000000000008152f35b50346102d95760606003193601126102d95761039d6103856111f3565b604435906103938233611c7e565b3390600435611acc565b80f35b50346102d95760206003193601126102d95760406020916004358152600483522054604051908152f35b50346102d957806003193601126102d9576020600854604051908152f35b50346102d95760206003193601126102d95760043573ffffffffffffffffffffffffffffffffffffffff81168091036105145773ffffffffffffffffffffffffffffffffffffffff7f00000000000000000000000000000000000000000000000000000000000000001633036104ec5780156104c4577fffffffffffffffffffffffff000000000000000000000000000000000000000082548273ffffffffffffffffffffffffffffffffffffffff82167fd58299b712891143e76310d5e664c4203c940a67db37cf856bdaa3c5c76a802c8680a31617815580f35b6004827fd92e233d000000000000000000000000000000000000000000000000000000008152fd5b6004827f30cd7471000000000000000000000000000000000000000000000000000000008152fd5b5080fd5b50346102d957806003193601126102d957602060405173ffffffffffffffffffffffffffffffffffffffff7f0000000000000000000000000000000000000000000000000000000000000000168152f35b50346102d95760206003193601126102d95760406020916004358152600583522054604051908152f35b50346102d95760206003193601126102d95760406020916004358152600383522054604051908152f35b50346102d957806003193601126102d95760206040517f00000000000000000000000000000000000000000000000000000000000000008152f35b50346102d95760206003193601126102d957600435908181526002602052604081209081549173ffffffffffffffffffffffffffffffffffffffff831691823314801590610793575b61076b576001820180549485156107435767ffffffffffffffff9060a01c16804210610718575091818493876020989452600188526040822054968781105f1461070d57610690908098611698565b848352600189526040832055557fffffffff0000000000000000ffffffffffffffffffffffffffffffffffffffff81541690557f04eda370f8b8612fa7266d7ebbd41af9d694e19793fe9d9ff31b3ddbd99b08e185604051868152a381806106fd575b5050604051908152f35b61070691611ce8565b5f816106f3565b506106908780611698565b7f449406b5000000000000000000000000000000000000000000000000000000008352600452602482fd5b6004837f83e89493000000000000000000000000000000000000000000000000000000008152fd5b807f6cb4fda50000000000000000000000000000000000000000000000000000000060049252fd5b508215610641565b50346102d957806003193601126102d957602060405173ffffffffffffffffffffffffffffffffffffffff7f0000000000000000000000000000000000000000000000000000000000000000168152f35b50346102d95760206003193601126102d95760809067ffffffffffffffff6004358083526002602052600160408085209485549381528260205220549301546040519373ffffffffffffffffffffffffffffffffffffffff831685526020850152604084015260a01c166060820152f35b50346102d95760206003193601126102d95760406020916004358152600683522054604051908152f35b50346102d95760206003193601126102d95760043580825260026020526040822073ffffffffffffffffffffffffffffffffffffffff8154168033149081159161097c575b50610954576001810180541561092c578390557fffffffff0000000000000000ffffffffffffffffffffffffffffffffffffffff81541690557fd8cbc85a53c8256123df110cc63eff1c972996c0ff5f10b6c8ec09a825d2c9c08280a280f35b6004847f83e89493000000000000000000000000000000000000000000000000000000008152fd5b6004837f6cb4fda5000000000000000000000000000000000000000000000000000000008152fd5b9050155f6108cc565b50346102d95760206003193601126102d95760406020916004358152600183522054604051908152f35b50346102d95760206003193601126102d95760406020916004358152600783522054604051908152f35b50346102d957806003193601126102d95773ffffffffffffffffffffffffffffffffffffffff6020915416604051908152f35b50346102d957806003193601126102d9577f00000000000000000000000000000000000000000000000000000000000000009073ffffffffffffffffffffffffffffffffffffffff8216918233141580610ad0575b610aa857602092600854926008557fd8138f8a3f377c5259ca548e70e4c2de94f129f5a11036a15b69513cba2b426a84604051858152a281806106fd575050604051908152f35b6004827f56cab67b000000000000000000000000000000000000000000000000000000008152fd5b5073ffffffffffffffffffffffffffffffffffffffff825416331415610a61565b50346102d95760206003193601126102d95760043580158015610b83575b610b5b57610b1d8133611c7e565b610b298160085461135d565b6008556040519081527fb93525465b6a6b5ecba22f70164cc7026bddb8a37aa7682e5bf5b1a94a6864dc60203392a280f35b6004827f749b5939000000000000000000000000000000000000000000000000000000008152fd5b50610bae7f000000000000000000000000000000000000000000000000000000000000000082611661565b1515610b0f565b5034610d2f57610140600319360112610d2f5760043590610bd46111f3565b60443573ffffffffffffffffffffffffffffffffffffffff811691828203610d2f576064359260e4359060ff8216809203610d2f57604051602081019088825273ffffffffffffffffffffffffffffffffffffffff8516604082015260c435606082015260608152610c47608082611229565b51902073ffffffffffffffffffffffffffffffffffffffff7f000000000000000000000000000000000000000000000000000000000000000016803b15610d2f575f92836101249260405196879586947fef55bec600000000000000000000000000000000000000000000000000000000865260048601523060248601528b6044860152608435606486015260a435608486015260a485015260c48401526101043560e484015283356101048401525af18015610d2457610d0e575b5061039d9394611acc565b61039d94505f610d1d91611229565b5f93610d03565b6040513d5f823e3d90fd5b5f80fd5b34610d2f5760c0600319360112610d2f5760043560243567ffffffffffffffff8111610d2f57610d679036906004016111c2565b60449291923567ffffffffffffffff8111610d2f57610d8a9036906004016111c2565b9160643567ffffffffffffffff8111610d2f57610dab9036906004016111c2565b60849691963567ffffffffffffffff8111610d2f57610dce9036906004016111c2565b97909660a43567ffffffffffffffff8111610d2f57610df19036906004016111c2565b92909373ffffffffffffffffffffffffffffffffffffffff5f5416330361108c57838b03611024578860061b8981046040148a15171561105f5790610e368a926112d1565b5f935f925f9260208101915b808510610efc5750505050501491821592610ee4575b5050610ebc5796959493929190600854975f975b808910610e7a5760088a9055005b909192939495969798610ead600191898989898f8f610e9d828b610ea693611320565b35918b8d611320565b359061186a565b99019796959493929190610e6c565b7f3d618e50000000000000000000000000000000000000000000000000000000005f5260045ffd5b9091505f52600560205260405f205414158980610e58565b91939590929496610f0e878488611320565b3591821590811561104c575b50611024578c8f8f8e905f925b8c878510610f7157505050505050906001918160061b86206040519060208201928352604082015260408152610f5e606082611229565b5190209701950193918d95949391610e42565b91610f8a91610f8486610f96969561135d565b91611320565b35938460f01c91611320565b358b66ffffffffffffff6effffffffffffffffffffffffffffff8560781c161603610ffc5760406001937dffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff8460061b8a01911660208201520152018f908f8f92908f91610f27565b7f237d5ec2000000000000000000000000000000000000000000000000000000005f5260045ffd5b7fff633a38000000000000000000000000000000000000000000000000000000005f5260045ffd5b9050611058838a61135d565b118f610f1a565b7f4e487b71000000000000000000000000000000000000000000000000000000005f52601160045260245ffd5b7f7c214f04000000000000000000000000000000000000000000000000000000005f5260045ffd5b34610d2f576040600319360112610d2f5760043567ffffffffffffffff8111610d2f576110e59036906004016111c2565b6024359067ffffffffffffffff8211610d2f5760209261110c6111149336906004016111c2565b92909161137e565b604051908152f35b34610d2f576020600319360112610d2f57602060016004358060081c5f526004835260ff60405f205491161c161515604051908152f35b34610d2f576020600319360112610d2f57602060016004358060081c5f526003835260ff60405f205491161c161515604051908152f35b34610d2f575f600319360112610d2f576020907f00000000000000000000000000000000000000000000000000000000000000008152f35b9181601f84011215610d2f5782359167ffffffffffffffff8311610d2f576020808501948460051b010111610d2f57565b6024359073ffffffffffffffffffffffffffffffffffffffff82168203610d2f57565b8181029291811591840414171561105f57565b90601f7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe0910116810190811067ffffffffffffffff82111761126a57604052565b7f4e487b71000000000000000000000000000000000000000000000000000000005f52604160045260245ffd5b67ffffffffffffffff811161126a57601f017fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe01660200190565b906112db82611297565b6112e86040519182611229565b8281527fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe06113168294611297565b0190602036910137565b91908110156113305760051b0190565b7f4e487b71000000000000000000000000000000000000000000000000000000005f52603260045260245ffd5b9190820180921161105f57565b80518210156113305760209160051b010190565b90929391935f73ffffffffffffffffffffffffffffffffffffffff5f5416330361108c576113ab856116a5565b916113b96040519384611229565b8583527fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe06113e6876116a5565b013660208501375f5f5b8781106115d75750508060061b8181046040148215171561105f57611414906112d1565b5f917fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff5f905f925f5b8181106114af57505061145595969798999a506116bd565b80156114a7575f5b825181101561149157806114736001928561136a565b5161147f828988611320565b355f528260205260405f20550161145d565b50935050506114a28260085461135d565b600855565b505f93505050565b6114ba81838f611320565b358060701c9067ffffffffffffffff82169182156115af5766ffffffffffffff8260781c16868103611581575b50600160ff919091161b8681161561152a575050906001917f8fec535e2000df0687739fc3f7b0b32ca8943ff6ba4f67b2172ade47d16ace065f80a25b0161143d565b92959150955017926001946115418d8c838d61174f565b91929092611555575b505050600190611524565b89611578939260408a936001979e9d60061b8d019060208201520152019861135d565b97905f8061154a565b9597899197611592949b93996116bd565b5f965f95845f526003602052600160ff60405f20549791506114e7565b7f771ba714000000000000000000000000000000000000000000000000000000005f5260045ffd5b6115e2818988611320565b359182111561160b57600190825f528160205260405f2054611604828861136a565b52016113f0565b5015611639577fc84ea9a5000000000000000000000000000000000000000000000000000000005f5260045ffd5b7fca0845bd000000000000000000000000000000000000000000000000000000005f5260045ffd5b811561166b570690565b7f4e487b71000000000000000000000000000000000000000000000000000000005f52601260045260245ffd5b9190820391821161105f57565b67ffffffffffffffff811161126a5760051b60200190565b939161173c575b5080156117375760209060061b910120815f52600560205260405f2054906040519060208201928352604082015260408152611701606082611229565b519020815f52600560205260405f20557fb5e2b0c5fa5504f27a19e82caabf843ccd18f819af1eae7af1d6d0d60d1bb0725f80a2565b505050565b835f52600360205260405f20555f6116c4565b9391929361ffff8260601c168151811015611842576117a8816117a07f00000000000000000000000000000000000000000000000000000000000000006bffffffffffffffffffffffff8716611216565b978897611320565b359485936117b6838561136a565b51908183116117d457500392506117cc9161136a565b526001929190565b67ffffffffffffffff9194507fb2ae23560d3793b5e33f1139545669a5dd751b219e87d55485b53e108c58a07993506040925066ffffffffffffff8160701c9160781c165f526004602052825f20600160ff83161b815417905582519489865260208601521692a35f929190565b7f22f787fc000000000000000000000000000000000000000000000000000000005f5260045ffd5b9593949190918615611aa45761ffff8360601c169080821015611a7c576118c26bffffffffffffffffffffffff947f000000000000000000000000000000000000000000000000000000000000000095869116611216565b968715611a5457885f52600760205260405f2054611a245791610f8a916118e99493611320565b359161192767ffffffffffffffff8260701c1692835f5260066020526bffffffffffffffffffffffff6119208860405f205461135d565b9316611216565b81116119e2578385116119a0579461199d95825f52600660205260405f2055825f52600160205260405f2061195d86825461135d565b9055805f526007602052600160405f20557fc0721ae73b3f8d344a611dc50526cc0c898d2d8210fa7a2361c7ead3df0ad5196020604051878152a4611698565b90565b5092505091805f526007602052600260405f20557ff583fe8b08b74cccbc51d14bb881e3b85d342700ceb230425d1cc13dd7cf0b49602060405160028152a390565b5092505091805f526007602052600260405f20557ff583fe8b08b74cccbc51d14bb881e3b85d342700ceb230425d1cc13dd7cf0b49602060405160018152a390565b5050505050509190507fb6f0ab26a0b5d2999711cd058e861f01cc2e9c31ac0c275d4ecce044cca15cbd5f80a290565b7f749b5939000000000000000000000000000000000000000000000000000000005f5260045ffd5b7f9c511c25000000000000000000000000000000000000000000000000000000005f5260045ffd5b7ffbd849c6000000000000000000000000000000000000000000000000000000005f5260045ffd5b919082156116395783158015611c4c575b611a5457825f52600260205260405f209073ffffffffffffffffffffffffffffffffffffffff82541615611b78575b5050604073ffffffffffffffffffffffffffffffffffffffff7f2dcdaad87b561ba5a69835009b4c53ef9d3c41ca6cc9574049187659d6c6a71592845f526001602052611b5c86845f205461135d565b855f52600160205280845f2055835196875260208701521693a3565b73ffffffffffffffffffffffffffffffffffffffff16908115611c24577f2dcdaad87b561ba5a69835009b4c53ef9d3c41ca6cc9574049187659d6c6a7159282826040947fffffffffffffffffffffffff000000000000000000000000000000000000000073ffffffffffffffffffffffffffffffffffffffff955416179055857fac803f2d7baf8977db614b92886816b923ee887c90ce5949164b63d8700f8ec45f80a39250611b0c565b7fd92e233d000000000000000000000000000000000000000000000000000000005f5260045ffd5b50611c777f000000000000000000000000000000000000000000000000000000000000000085611661565b1515611add565b611ce69173ffffffffffffffffffffffffffffffffffffffff604051927f23b872dd000000000000000000000000000000000000000000000000000000006020850152166024830152306044830152606482015260648152611ce1608482611229565b611d45565b565b611ce69173ffffffffffffffffffffffffffffffffffffffff604051927fa9059cbb000000000000000000000000000000000000000000000000000000006020850152166024830152604482015260448152611ce1606482611229565b5f80916020815191018273ffffffffffffffffffffffffffffffffffffffff7f0000000000000000000000000000000000000000000000000000000000000000165af13d15611e1f573d90611d9982611297565b91611da76040519384611229565b82523d5f602084013e5b15611e17578051908115159182611df3575b5050611dcb57565b7f90b8ec18000000000000000000000000000000000000000000000000000000005f5260045ffd5b8192509060209181010312610d2f5760200151801590811503610d2f575f80611dc3565b602081519101fd5b606090611db156fea164736f6c634300081c000a",
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
	if bytes.Equal(raw[:4], settleflowSettlement.abi.Errors["BadChargeIndex"].ID.Bytes()[:4]) {
		return settleflowSettlement.UnpackBadChargeIndexError(raw[4:])
	}
	if bytes.Equal(raw[:4], settleflowSettlement.abi.Errors["BadCustomerIndex"].ID.Bytes()[:4]) {
		return settleflowSettlement.UnpackBadCustomerIndexError(raw[4:])
	}
	if bytes.Equal(raw[:4], settleflowSettlement.abi.Errors["ChargeNotInWord"].ID.Bytes()[:4]) {
		return settleflowSettlement.UnpackChargeNotInWordError(raw[4:])
	}
	if bytes.Equal(raw[:4], settleflowSettlement.abi.Errors["CustomersNotSorted"].ID.Bytes()[:4]) {
		return settleflowSettlement.UnpackCustomersNotSortedError(raw[4:])
	}
	if bytes.Equal(raw[:4], settleflowSettlement.abi.Errors["LengthMismatch"].ID.Bytes()[:4]) {
		return settleflowSettlement.UnpackLengthMismatchError(raw[4:])
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
