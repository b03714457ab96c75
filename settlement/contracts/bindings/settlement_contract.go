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

// SettleflowSettlementCharge is an auto generated low-level Go binding around an user-defined struct.
type SettleflowSettlementCharge struct {
	WorkflowId  [32]byte
	Sequence    *big.Int
	CustomerRef [32]byte
	Amount      *big.Int
}

// SettleflowSettlementMetaData contains all meta data concerning the SettleflowSettlement contract.
var SettleflowSettlementMetaData = bind.MetaData{
	ABI: "[{\"inputs\":[{\"internalType\":\"contractIERC20TransferFrom\",\"name\":\"token_\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"payee_\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"operator_\",\"type\":\"address\"}],\"stateMutability\":\"nonpayable\",\"type\":\"constructor\"},{\"inputs\":[],\"name\":\"NotOperator\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"NotOwner\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"TransferFailed\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"ZeroAddress\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"ZeroSequence\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"ZeroWorkflowId\",\"type\":\"error\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"workflowId\",\"type\":\"bytes32\"},{\"indexed\":true,\"internalType\":\"uint256\",\"name\":\"sequence\",\"type\":\"uint256\"}],\"name\":\"AlreadySettled\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"address\",\"name\":\"previous\",\"type\":\"address\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"next\",\"type\":\"address\"}],\"name\":\"OperatorChanged\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"workflowId\",\"type\":\"bytes32\"},{\"indexed\":true,\"internalType\":\"uint256\",\"name\":\"sequence\",\"type\":\"uint256\"},{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"customerRef\",\"type\":\"bytes32\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"}],\"name\":\"Settled\",\"type\":\"event\"},{\"inputs\":[],\"name\":\"deployedAt\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"operator\",\"outputs\":[{\"internalType\":\"address\",\"name\":\"\",\"type\":\"address\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"owner\",\"outputs\":[{\"internalType\":\"address\",\"name\":\"\",\"type\":\"address\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"payee\",\"outputs\":[{\"internalType\":\"address\",\"name\":\"\",\"type\":\"address\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"next\",\"type\":\"address\"}],\"name\":\"setOperator\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"components\":[{\"internalType\":\"bytes32\",\"name\":\"workflowId\",\"type\":\"bytes32\"},{\"internalType\":\"uint256\",\"name\":\"sequence\",\"type\":\"uint256\"},{\"internalType\":\"bytes32\",\"name\":\"customerRef\",\"type\":\"bytes32\"},{\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"}],\"internalType\":\"structSettleflowSettlement.Charge[]\",\"name\":\"charges\",\"type\":\"tuple[]\"}],\"name\":\"settle\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"total\",\"type\":\"uint256\"}],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"sequence\",\"type\":\"uint256\"}],\"name\":\"settled\",\"outputs\":[{\"internalType\":\"bool\",\"name\":\"\",\"type\":\"bool\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"word\",\"type\":\"uint256\"}],\"name\":\"settledWords\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"bits\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"token\",\"outputs\":[{\"internalType\":\"contractIERC20TransferFrom\",\"name\":\"\",\"type\":\"address\"}],\"stateMutability\":\"view\",\"type\":\"function\"}]",
	ID:  "SettleflowSettlement",
	Bin: "0x610100604052348015610010575f5ffd5b50604051610a1f380380610a1f83398101604081905261002f916100f4565b6001600160a01b038316158061004c57506001600160a01b038216155b8061005e57506001600160a01b038116155b1561007c5760405163d92e233d60e01b815260040160405180910390fd5b6001600160a01b0383811660805282811660a0523360c0525f80546001600160a01b03191691831691821781554360e0526040517fd58299b712891143e76310d5e664c4203c940a67db37cf856bdaa3c5c76a802c908290a350505061013e565b6001600160a01b03811681146100f1575f5ffd5b50565b5f5f5f60608486031215610106575f5ffd5b8351610111816100dd565b6020850151909350610122816100dd565b6040850151909250610133816100dd565b809150509250925092565b60805160a05160c05160e0516108996101865f395f6101c401525f8181610134015261023801525f8181610188015261059d01525f81816101eb01526105d001526108995ff3fe608060405234801561000f575f5ffd5b506004361061009f575f3560e01c8063ae90b21311610072578063eae4c19f11610058578063eae4c19f146101bf578063fc0c546a146101e6578063fd8993641461020d575f5ffd5b8063ae90b21314610183578063b3ab15fb146101aa575f5ffd5b806328345780146100a3578063570ca735146100eb5780638da5cb5b1461012f5780639e6897fe14610156575b5f5ffd5b6100d66100b136600461072a565b600881901c5f9081526001602081905260409091205460ff9092169190911c16151590565b60405190151581526020015b60405180910390f35b5f5461010a9073ffffffffffffffffffffffffffffffffffffffff1681565b60405173ffffffffffffffffffffffffffffffffffffffff90911681526020016100e2565b61010a7f000000000000000000000000000000000000000000000000000000000000000081565b61017561016436600461072a565b60016020525f908152604090205481565b6040519081526020016100e2565b61010a7f000000000000000000000000000000000000000000000000000000000000000081565b6101bd6101b8366004610741565b610220565b005b6101757f000000000000000000000000000000000000000000000000000000000000000081565b61010a7f000000000000000000000000000000000000000000000000000000000000000081565b61017561021b36600461077b565b610367565b3373ffffffffffffffffffffffffffffffffffffffff7f0000000000000000000000000000000000000000000000000000000000000000161461028f576040517f30cd747100000000000000000000000000000000000000000000000000000000815260040160405180910390fd5b73ffffffffffffffffffffffffffffffffffffffff81166102dc576040517fd92e233d00000000000000000000000000000000000000000000000000000000815260040160405180910390fd5b5f805460405173ffffffffffffffffffffffffffffffffffffffff808516939216917fd58299b712891143e76310d5e664c4203c940a67db37cf856bdaa3c5c76a802c91a35f80547fffffffffffffffffffffffff00000000000000000000000000000000000000001673ffffffffffffffffffffffffffffffffffffffff92909216919091179055565b5f805473ffffffffffffffffffffffffffffffffffffffff1633146103b8576040517f7c214f0400000000000000000000000000000000000000000000000000000000815260040160405180910390fd5b817fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff5f80805b8481101561055f57368888838181106103f9576103f96107ec565b608002919091019150508035602082013581610441576040517fb34aea3800000000000000000000000000000000000000000000000000000000815260040160405180910390fd5b805f0361047a576040517f771ba71400000000000000000000000000000000000000000000000000000000815260040160405180910390fd5b600881901c8781146104b457851561049f575f88815260016020526040812088905595505b5f818152600160205260409020549097509550865b600160ff83161b878116156104f457604051839085907f6fd708b65d8f7b2eef4a4c478ebc526d97d62c398b287948fad435e37dd54f9f905f90a361054f565b9687179660019650606085013561050b818d610819565b9b50856040013584867f52ef391d3d8944ef92701c8b78484d32c5ec48a033ff1add84fb7777388184578460405161054591815260200190565b60405180910390a4505b85600101955050505050506103de565b508015610577575f8381526001602052604090208290555b84156107205760405133602482015273ffffffffffffffffffffffffffffffffffffffff7f000000000000000000000000000000000000000000000000000000000000000081166044830152606482018790525f9182917f00000000000000000000000000000000000000000000000000000000000000001690608401604080517fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe08184030181529181526020820180517bffffffffffffffffffffffffffffffffffffffffffffffffffffffff167f23b872dd00000000000000000000000000000000000000000000000000000000179052516106759190610857565b5f604051808303815f865af19150503d805f81146106ae576040519150601f19603f3d011682016040523d82523d5f602084013e6106b3565b606091505b5091509150816106c557805160208201fd5b8051158015906106e65750808060200190518101906106e4919061086d565b155b1561071d576040517f90b8ec1800000000000000000000000000000000000000000000000000000000815260040160405180910390fd5b50505b5050505092915050565b5f6020828403121561073a575f5ffd5b5035919050565b5f60208284031215610751575f5ffd5b813573ffffffffffffffffffffffffffffffffffffffff81168114610774575f5ffd5b9392505050565b5f5f6020838503121561078c575f5ffd5b823567ffffffffffffffff8111156107a2575f5ffd5b8301601f810185136107b2575f5ffd5b803567ffffffffffffffff8111156107c8575f5ffd5b8560208260071b84010111156107dc575f5ffd5b6020919091019590945092505050565b7f4e487b71000000000000000000000000000000000000000000000000000000005f52603260045260245ffd5b80820180821115610851577f4e487b71000000000000000000000000000000000000000000000000000000005f52601160045260245ffd5b92915050565b5f82518060208501845e5f920191825250919050565b5f6020828403121561087d575f5ffd5b81518015158114610774575f5ffdfea164736f6c634300081c000a",
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
// Solidity: constructor(address token_, address payee_, address operator_) returns()
func (settleflowSettlement *SettleflowSettlement) PackConstructor(token_ common.Address, payee_ common.Address, operator_ common.Address) []byte {
	enc, err := settleflowSettlement.abi.Pack("", token_, payee_, operator_)
	if err != nil {
		panic(err)
	}
	return enc
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
// the contract method with ID 0xfd899364.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function settle((bytes32,uint256,bytes32,uint256)[] charges) returns(uint256 total)
func (settleflowSettlement *SettleflowSettlement) PackSettle(charges []SettleflowSettlementCharge) []byte {
	enc, err := settleflowSettlement.abi.Pack("settle", charges)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackSettle is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xfd899364.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function settle((bytes32,uint256,bytes32,uint256)[] charges) returns(uint256 total)
func (settleflowSettlement *SettleflowSettlement) TryPackSettle(charges []SettleflowSettlementCharge) ([]byte, error) {
	return settleflowSettlement.abi.Pack("settle", charges)
}

// UnpackSettle is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xfd899364.
//
// Solidity: function settle((bytes32,uint256,bytes32,uint256)[] charges) returns(uint256 total)
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

// SettleflowSettlementAlreadySettled represents a AlreadySettled event raised by the SettleflowSettlement contract.
type SettleflowSettlementAlreadySettled struct {
	WorkflowId [32]byte
	Sequence   *big.Int
	Raw        *types.Log // Blockchain specific contextual infos
}

const SettleflowSettlementAlreadySettledEventName = "AlreadySettled"

// ContractEventName returns the user-defined event name.
func (SettleflowSettlementAlreadySettled) ContractEventName() string {
	return SettleflowSettlementAlreadySettledEventName
}

// UnpackAlreadySettledEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event AlreadySettled(bytes32 indexed workflowId, uint256 indexed sequence)
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

// SettleflowSettlementSettled represents a Settled event raised by the SettleflowSettlement contract.
type SettleflowSettlementSettled struct {
	WorkflowId  [32]byte
	Sequence    *big.Int
	CustomerRef [32]byte
	Amount      *big.Int
	Raw         *types.Log // Blockchain specific contextual infos
}

const SettleflowSettlementSettledEventName = "Settled"

// ContractEventName returns the user-defined event name.
func (SettleflowSettlementSettled) ContractEventName() string {
	return SettleflowSettlementSettledEventName
}

// UnpackSettledEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event Settled(bytes32 indexed workflowId, uint256 indexed sequence, bytes32 indexed customerRef, uint256 amount)
func (settleflowSettlement *SettleflowSettlement) UnpackSettledEvent(log *types.Log) (*SettleflowSettlementSettled, error) {
	event := "Settled"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != settleflowSettlement.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(SettleflowSettlementSettled)
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
	if bytes.Equal(raw[:4], settleflowSettlement.abi.Errors["NotOperator"].ID.Bytes()[:4]) {
		return settleflowSettlement.UnpackNotOperatorError(raw[4:])
	}
	if bytes.Equal(raw[:4], settleflowSettlement.abi.Errors["NotOwner"].ID.Bytes()[:4]) {
		return settleflowSettlement.UnpackNotOwnerError(raw[4:])
	}
	if bytes.Equal(raw[:4], settleflowSettlement.abi.Errors["TransferFailed"].ID.Bytes()[:4]) {
		return settleflowSettlement.UnpackTransferFailedError(raw[4:])
	}
	if bytes.Equal(raw[:4], settleflowSettlement.abi.Errors["ZeroAddress"].ID.Bytes()[:4]) {
		return settleflowSettlement.UnpackZeroAddressError(raw[4:])
	}
	if bytes.Equal(raw[:4], settleflowSettlement.abi.Errors["ZeroSequence"].ID.Bytes()[:4]) {
		return settleflowSettlement.UnpackZeroSequenceError(raw[4:])
	}
	if bytes.Equal(raw[:4], settleflowSettlement.abi.Errors["ZeroWorkflowId"].ID.Bytes()[:4]) {
		return settleflowSettlement.UnpackZeroWorkflowIdError(raw[4:])
	}
	return nil, errors.New("Unknown error")
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

// SettleflowSettlementZeroWorkflowId represents a ZeroWorkflowId error raised by the SettleflowSettlement contract.
type SettleflowSettlementZeroWorkflowId struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error ZeroWorkflowId()
func SettleflowSettlementZeroWorkflowIdErrorID() common.Hash {
	return common.HexToHash("0xb34aea386017321f12c3659679deba6592a61ab345d319155106f8bc4c47f997")
}

// UnpackZeroWorkflowIdError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error ZeroWorkflowId()
func (settleflowSettlement *SettleflowSettlement) UnpackZeroWorkflowIdError(raw []byte) (*SettleflowSettlementZeroWorkflowId, error) {
	out := new(SettleflowSettlementZeroWorkflowId)
	if err := settleflowSettlement.abi.UnpackIntoInterface(out, "ZeroWorkflowId", raw); err != nil {
		return nil, err
	}
	return out, nil
}
