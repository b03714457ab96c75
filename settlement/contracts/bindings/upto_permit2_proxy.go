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

// ISignatureTransferPermitTransferFrom is an auto generated low-level Go binding around an user-defined struct.
type ISignatureTransferPermitTransferFrom struct {
	Permitted ISignatureTransferTokenPermissions
	Nonce     *big.Int
	Deadline  *big.Int
}

// ISignatureTransferTokenPermissions is an auto generated low-level Go binding around an user-defined struct.
type ISignatureTransferTokenPermissions struct {
	Token  common.Address
	Amount *big.Int
}

// UptoPermit2ProxyWitness is an auto generated low-level Go binding around an user-defined struct.
type UptoPermit2ProxyWitness struct {
	To          common.Address
	Facilitator common.Address
	ValidAfter  *big.Int
}

// UptoPermit2ProxyMetaData contains all meta data concerning the UptoPermit2Proxy contract.
var UptoPermit2ProxyMetaData = bind.MetaData{
	ABI: "[{\"inputs\":[],\"name\":\"AmountExceedsPermitted\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"InvalidAmount\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"InvalidDestination\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"InvalidOwner\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"PaymentTooEarly\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"ReentrancyGuardReentrantCall\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"UnauthorizedFacilitator\",\"type\":\"error\"},{\"anonymous\":false,\"inputs\":[],\"name\":\"Settled\",\"type\":\"event\"},{\"inputs\":[],\"name\":\"PERMIT2\",\"outputs\":[{\"internalType\":\"contractISignatureTransfer\",\"name\":\"\",\"type\":\"address\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"WITNESS_TYPEHASH\",\"outputs\":[{\"internalType\":\"bytes32\",\"name\":\"\",\"type\":\"bytes32\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"WITNESS_TYPE_STRING\",\"outputs\":[{\"internalType\":\"string\",\"name\":\"\",\"type\":\"string\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"components\":[{\"components\":[{\"internalType\":\"address\",\"name\":\"token\",\"type\":\"address\"},{\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"}],\"internalType\":\"structISignatureTransfer.TokenPermissions\",\"name\":\"permitted\",\"type\":\"tuple\"},{\"internalType\":\"uint256\",\"name\":\"nonce\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"deadline\",\"type\":\"uint256\"}],\"internalType\":\"structISignatureTransfer.PermitTransferFrom\",\"name\":\"permit\",\"type\":\"tuple\"},{\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"},{\"internalType\":\"address\",\"name\":\"owner\",\"type\":\"address\"},{\"components\":[{\"internalType\":\"address\",\"name\":\"to\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"facilitator\",\"type\":\"address\"},{\"internalType\":\"uint256\",\"name\":\"validAfter\",\"type\":\"uint256\"}],\"internalType\":\"structUptoPermit2Proxy.Witness\",\"name\":\"witness\",\"type\":\"tuple\"},{\"internalType\":\"bytes\",\"name\":\"signature\",\"type\":\"bytes\"}],\"name\":\"settle\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"}]",
	ID:  "UptoPermit2Proxy",
	Bin: "0x608080604052346015576107ac908161001a8239f35b5f80fdfe60806040526004361015610011575f80fd5b5f5f3560e01c8063156e2152146105c85780632c03ae6a146105705780636afdd850146105295763ff11e7b414610046575f80fd5b346103e0577ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffc360161014081126103e0576080136103e05760843560a43573ffffffffffffffffffffffffffffffffffffffff81168091036103e05760607fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff3c3601126103e0576101243567ffffffffffffffff81116103e057366023820112156103e05780600401359267ffffffffffffffff84116103e05736602485840101116103e05760025f54146105015760025f55602435918282116104d95773ffffffffffffffffffffffffffffffffffffffff610140610759565b1633036104b15781156104895783156104615773ffffffffffffffffffffffffffffffffffffffff61017061077c565b161561043957610104358042106104115761018961077c565b90610192610759565b9073ffffffffffffffffffffffffffffffffffffffff604051928160208501957fd4171c445a74218b01d4fd8af34ff1106580ea1e36ff837e64484bfaa2253b7587521660408501521660608301526080820152608081526101f560a082610619565b5190209061020161077c565b9460405195604087019087821067ffffffffffffffff8311176103e45773ffffffffffffffffffffffffffffffffffffffff916040521686526020860193845261024961065a565b936e22d473030f116ddee9f6b43ac78ba33b156103e057604051977f137c29fe00000000000000000000000000000000000000000000000000000000895260043573ffffffffffffffffffffffffffffffffffffffff81168091036103e05760246103376020988c9a987fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe097601f9773ffffffffffffffffffffffffffffffffffffffff5f9f8f9d888f8c9b600482015201528d604480359101528d60648035910152511660848d01525160a48c015260c48b015260e48a01526101406101048a0152610144890190610716565b957ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffc88880301610124890152828752018786013787868286010152011601030181836e22d473030f116ddee9f6b43ac78ba35af180156103d5576103c2575b507f97088ec3606cfe8cc112180570d03fcde05f9b8e1bfef8e27784eaf5dd5691b68180a16001815580f35b6103ce91505f90610619565b5f5f610396565b6040513d5f823e3d90fd5b5f80fd5b7f4e487b71000000000000000000000000000000000000000000000000000000005f52604160045260245ffd5b7fa65539fa000000000000000000000000000000000000000000000000000000005f5260045ffd5b7fac6b05f5000000000000000000000000000000000000000000000000000000005f5260045ffd5b7f49e27cff000000000000000000000000000000000000000000000000000000005f5260045ffd5b7f2c5211c6000000000000000000000000000000000000000000000000000000005f5260045ffd5b7f0f6fae87000000000000000000000000000000000000000000000000000000005f5260045ffd5b7ffe64b4c7000000000000000000000000000000000000000000000000000000005f5260045ffd5b7f3ee5aeb5000000000000000000000000000000000000000000000000000000005f5260045ffd5b346103e0575f7ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffc3601126103e05760206040516e22d473030f116ddee9f6b43ac78ba38152f35b346103e0575f7ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffc3601126103e05760206040517fd4171c445a74218b01d4fd8af34ff1106580ea1e36ff837e64484bfaa2253b758152f35b346103e0575f7ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffc3601126103e05761061561060161065a565b604051918291602083526020830190610716565b0390f35b90601f7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe0910116810190811067ffffffffffffffff8211176103e457604052565b6040519060a0820182811067ffffffffffffffff8211176103e457604052607882527f61746f722c75696e743235362076616c696441667465722900000000000000006080837f5769746e657373207769746e65737329546f6b656e5065726d697373696f6e7360208201527f286164647265737320746f6b656e2c75696e7432353620616d6f756e7429576960408201527f746e657373286164647265737320746f2c6164647265737320666163696c697460608201520152565b907fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe0601f602080948051918291828752018686015e5f8582860101520116010190565b60e43573ffffffffffffffffffffffffffffffffffffffff811681036103e05790565b60c43573ffffffffffffffffffffffffffffffffffffffff811681036103e0579056fea164736f6c634300081c000a",
}

// UptoPermit2Proxy is an auto generated Go binding around an Ethereum contract.
type UptoPermit2Proxy struct {
	abi abi.ABI
}

// GetABI returns the ABI associated with this contract binding.
func (c *UptoPermit2Proxy) GetABI() abi.ABI {
	return c.abi
}

// NewUptoPermit2Proxy creates a new instance of UptoPermit2Proxy.
func NewUptoPermit2Proxy() *UptoPermit2Proxy {
	parsed, err := UptoPermit2ProxyMetaData.ParseABI()
	if err != nil {
		panic(errors.New("invalid ABI: " + err.Error()))
	}
	return &UptoPermit2Proxy{abi: *parsed}
}

// Instance creates a wrapper for a deployed contract instance at the given address.
// Use this to create the instance object passed to abigen v2 library functions Call, Transact, etc.
func (c *UptoPermit2Proxy) Instance(backend bind.ContractBackend, addr common.Address) *bind.BoundContract {
	return bind.NewBoundContract(addr, c.abi, backend, backend, backend)
}

// PackPERMIT2 is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x6afdd850.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function PERMIT2() view returns(address)
func (uptoPermit2Proxy *UptoPermit2Proxy) PackPERMIT2() []byte {
	enc, err := uptoPermit2Proxy.abi.Pack("PERMIT2")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackPERMIT2 is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x6afdd850.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function PERMIT2() view returns(address)
func (uptoPermit2Proxy *UptoPermit2Proxy) TryPackPERMIT2() ([]byte, error) {
	return uptoPermit2Proxy.abi.Pack("PERMIT2")
}

// UnpackPERMIT2 is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x6afdd850.
//
// Solidity: function PERMIT2() view returns(address)
func (uptoPermit2Proxy *UptoPermit2Proxy) UnpackPERMIT2(data []byte) (common.Address, error) {
	out, err := uptoPermit2Proxy.abi.Unpack("PERMIT2", data)
	if err != nil {
		return *new(common.Address), err
	}
	out0 := *abi.ConvertType(out[0], new(common.Address)).(*common.Address)
	return out0, nil
}

// PackWITNESSTYPEHASH is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x2c03ae6a.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function WITNESS_TYPEHASH() view returns(bytes32)
func (uptoPermit2Proxy *UptoPermit2Proxy) PackWITNESSTYPEHASH() []byte {
	enc, err := uptoPermit2Proxy.abi.Pack("WITNESS_TYPEHASH")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackWITNESSTYPEHASH is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x2c03ae6a.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function WITNESS_TYPEHASH() view returns(bytes32)
func (uptoPermit2Proxy *UptoPermit2Proxy) TryPackWITNESSTYPEHASH() ([]byte, error) {
	return uptoPermit2Proxy.abi.Pack("WITNESS_TYPEHASH")
}

// UnpackWITNESSTYPEHASH is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x2c03ae6a.
//
// Solidity: function WITNESS_TYPEHASH() view returns(bytes32)
func (uptoPermit2Proxy *UptoPermit2Proxy) UnpackWITNESSTYPEHASH(data []byte) ([32]byte, error) {
	out, err := uptoPermit2Proxy.abi.Unpack("WITNESS_TYPEHASH", data)
	if err != nil {
		return *new([32]byte), err
	}
	out0 := *abi.ConvertType(out[0], new([32]byte)).(*[32]byte)
	return out0, nil
}

// PackWITNESSTYPESTRING is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x156e2152.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function WITNESS_TYPE_STRING() view returns(string)
func (uptoPermit2Proxy *UptoPermit2Proxy) PackWITNESSTYPESTRING() []byte {
	enc, err := uptoPermit2Proxy.abi.Pack("WITNESS_TYPE_STRING")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackWITNESSTYPESTRING is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x156e2152.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function WITNESS_TYPE_STRING() view returns(string)
func (uptoPermit2Proxy *UptoPermit2Proxy) TryPackWITNESSTYPESTRING() ([]byte, error) {
	return uptoPermit2Proxy.abi.Pack("WITNESS_TYPE_STRING")
}

// UnpackWITNESSTYPESTRING is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x156e2152.
//
// Solidity: function WITNESS_TYPE_STRING() view returns(string)
func (uptoPermit2Proxy *UptoPermit2Proxy) UnpackWITNESSTYPESTRING(data []byte) (string, error) {
	out, err := uptoPermit2Proxy.abi.Unpack("WITNESS_TYPE_STRING", data)
	if err != nil {
		return *new(string), err
	}
	out0 := *abi.ConvertType(out[0], new(string)).(*string)
	return out0, nil
}

// PackSettle is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xff11e7b4.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function settle(((address,uint256),uint256,uint256) permit, uint256 amount, address owner, (address,address,uint256) witness, bytes signature) returns()
func (uptoPermit2Proxy *UptoPermit2Proxy) PackSettle(permit ISignatureTransferPermitTransferFrom, amount *big.Int, owner common.Address, witness UptoPermit2ProxyWitness, signature []byte) []byte {
	enc, err := uptoPermit2Proxy.abi.Pack("settle", permit, amount, owner, witness, signature)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackSettle is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xff11e7b4.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function settle(((address,uint256),uint256,uint256) permit, uint256 amount, address owner, (address,address,uint256) witness, bytes signature) returns()
func (uptoPermit2Proxy *UptoPermit2Proxy) TryPackSettle(permit ISignatureTransferPermitTransferFrom, amount *big.Int, owner common.Address, witness UptoPermit2ProxyWitness, signature []byte) ([]byte, error) {
	return uptoPermit2Proxy.abi.Pack("settle", permit, amount, owner, witness, signature)
}

// UptoPermit2ProxySettled represents a Settled event raised by the UptoPermit2Proxy contract.
type UptoPermit2ProxySettled struct {
	Raw *types.Log // Blockchain specific contextual infos
}

const UptoPermit2ProxySettledEventName = "Settled"

// ContractEventName returns the user-defined event name.
func (UptoPermit2ProxySettled) ContractEventName() string {
	return UptoPermit2ProxySettledEventName
}

// UnpackSettledEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event Settled()
func (uptoPermit2Proxy *UptoPermit2Proxy) UnpackSettledEvent(log *types.Log) (*UptoPermit2ProxySettled, error) {
	event := "Settled"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != uptoPermit2Proxy.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(UptoPermit2ProxySettled)
	if len(log.Data) > 0 {
		if err := uptoPermit2Proxy.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range uptoPermit2Proxy.abi.Events[event].Inputs {
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
func (uptoPermit2Proxy *UptoPermit2Proxy) UnpackError(raw []byte) (any, error) {
	if bytes.Equal(raw[:4], uptoPermit2Proxy.abi.Errors["AmountExceedsPermitted"].ID.Bytes()[:4]) {
		return uptoPermit2Proxy.UnpackAmountExceedsPermittedError(raw[4:])
	}
	if bytes.Equal(raw[:4], uptoPermit2Proxy.abi.Errors["InvalidAmount"].ID.Bytes()[:4]) {
		return uptoPermit2Proxy.UnpackInvalidAmountError(raw[4:])
	}
	if bytes.Equal(raw[:4], uptoPermit2Proxy.abi.Errors["InvalidDestination"].ID.Bytes()[:4]) {
		return uptoPermit2Proxy.UnpackInvalidDestinationError(raw[4:])
	}
	if bytes.Equal(raw[:4], uptoPermit2Proxy.abi.Errors["InvalidOwner"].ID.Bytes()[:4]) {
		return uptoPermit2Proxy.UnpackInvalidOwnerError(raw[4:])
	}
	if bytes.Equal(raw[:4], uptoPermit2Proxy.abi.Errors["PaymentTooEarly"].ID.Bytes()[:4]) {
		return uptoPermit2Proxy.UnpackPaymentTooEarlyError(raw[4:])
	}
	if bytes.Equal(raw[:4], uptoPermit2Proxy.abi.Errors["ReentrancyGuardReentrantCall"].ID.Bytes()[:4]) {
		return uptoPermit2Proxy.UnpackReentrancyGuardReentrantCallError(raw[4:])
	}
	if bytes.Equal(raw[:4], uptoPermit2Proxy.abi.Errors["UnauthorizedFacilitator"].ID.Bytes()[:4]) {
		return uptoPermit2Proxy.UnpackUnauthorizedFacilitatorError(raw[4:])
	}
	return nil, errors.New("Unknown error")
}

// UptoPermit2ProxyAmountExceedsPermitted represents a AmountExceedsPermitted error raised by the UptoPermit2Proxy contract.
type UptoPermit2ProxyAmountExceedsPermitted struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error AmountExceedsPermitted()
func UptoPermit2ProxyAmountExceedsPermittedErrorID() common.Hash {
	return common.HexToHash("0xfe64b4c79c64499c7b848a8b3ba618f45c6f9ef21365d5d7e24aeb3ff041c552")
}

// UnpackAmountExceedsPermittedError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error AmountExceedsPermitted()
func (uptoPermit2Proxy *UptoPermit2Proxy) UnpackAmountExceedsPermittedError(raw []byte) (*UptoPermit2ProxyAmountExceedsPermitted, error) {
	out := new(UptoPermit2ProxyAmountExceedsPermitted)
	if err := uptoPermit2Proxy.abi.UnpackIntoInterface(out, "AmountExceedsPermitted", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// UptoPermit2ProxyInvalidAmount represents a InvalidAmount error raised by the UptoPermit2Proxy contract.
type UptoPermit2ProxyInvalidAmount struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error InvalidAmount()
func UptoPermit2ProxyInvalidAmountErrorID() common.Hash {
	return common.HexToHash("0x2c5211c6cb73b16841677a034781e8336d18ce66df858e54153c86854e11f7b8")
}

// UnpackInvalidAmountError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error InvalidAmount()
func (uptoPermit2Proxy *UptoPermit2Proxy) UnpackInvalidAmountError(raw []byte) (*UptoPermit2ProxyInvalidAmount, error) {
	out := new(UptoPermit2ProxyInvalidAmount)
	if err := uptoPermit2Proxy.abi.UnpackIntoInterface(out, "InvalidAmount", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// UptoPermit2ProxyInvalidDestination represents a InvalidDestination error raised by the UptoPermit2Proxy contract.
type UptoPermit2ProxyInvalidDestination struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error InvalidDestination()
func UptoPermit2ProxyInvalidDestinationErrorID() common.Hash {
	return common.HexToHash("0xac6b05f542ae1b66b4b43710bf4773616692aad79ee0fe8cb9c5db0f38dd0764")
}

// UnpackInvalidDestinationError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error InvalidDestination()
func (uptoPermit2Proxy *UptoPermit2Proxy) UnpackInvalidDestinationError(raw []byte) (*UptoPermit2ProxyInvalidDestination, error) {
	out := new(UptoPermit2ProxyInvalidDestination)
	if err := uptoPermit2Proxy.abi.UnpackIntoInterface(out, "InvalidDestination", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// UptoPermit2ProxyInvalidOwner represents a InvalidOwner error raised by the UptoPermit2Proxy contract.
type UptoPermit2ProxyInvalidOwner struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error InvalidOwner()
func UptoPermit2ProxyInvalidOwnerErrorID() common.Hash {
	return common.HexToHash("0x49e27cffb37b1ca4a9bf5318243b2014d13f940af232b8552c208bdea15739da")
}

// UnpackInvalidOwnerError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error InvalidOwner()
func (uptoPermit2Proxy *UptoPermit2Proxy) UnpackInvalidOwnerError(raw []byte) (*UptoPermit2ProxyInvalidOwner, error) {
	out := new(UptoPermit2ProxyInvalidOwner)
	if err := uptoPermit2Proxy.abi.UnpackIntoInterface(out, "InvalidOwner", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// UptoPermit2ProxyPaymentTooEarly represents a PaymentTooEarly error raised by the UptoPermit2Proxy contract.
type UptoPermit2ProxyPaymentTooEarly struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error PaymentTooEarly()
func UptoPermit2ProxyPaymentTooEarlyErrorID() common.Hash {
	return common.HexToHash("0xa65539fa34358c9b74d7a9931e9f563c9c02f41d47fa53ce79e35e1cadee70d6")
}

// UnpackPaymentTooEarlyError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error PaymentTooEarly()
func (uptoPermit2Proxy *UptoPermit2Proxy) UnpackPaymentTooEarlyError(raw []byte) (*UptoPermit2ProxyPaymentTooEarly, error) {
	out := new(UptoPermit2ProxyPaymentTooEarly)
	if err := uptoPermit2Proxy.abi.UnpackIntoInterface(out, "PaymentTooEarly", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// UptoPermit2ProxyReentrancyGuardReentrantCall represents a ReentrancyGuardReentrantCall error raised by the UptoPermit2Proxy contract.
type UptoPermit2ProxyReentrancyGuardReentrantCall struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error ReentrancyGuardReentrantCall()
func UptoPermit2ProxyReentrancyGuardReentrantCallErrorID() common.Hash {
	return common.HexToHash("0x3ee5aeb571de7fc460830b4d0017439a1ca56fb0bc39062227ade4fe4a24c1ca")
}

// UnpackReentrancyGuardReentrantCallError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error ReentrancyGuardReentrantCall()
func (uptoPermit2Proxy *UptoPermit2Proxy) UnpackReentrancyGuardReentrantCallError(raw []byte) (*UptoPermit2ProxyReentrancyGuardReentrantCall, error) {
	out := new(UptoPermit2ProxyReentrancyGuardReentrantCall)
	if err := uptoPermit2Proxy.abi.UnpackIntoInterface(out, "ReentrancyGuardReentrantCall", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// UptoPermit2ProxyUnauthorizedFacilitator represents a UnauthorizedFacilitator error raised by the UptoPermit2Proxy contract.
type UptoPermit2ProxyUnauthorizedFacilitator struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error UnauthorizedFacilitator()
func UptoPermit2ProxyUnauthorizedFacilitatorErrorID() common.Hash {
	return common.HexToHash("0x0f6fae871871fa0fd46c599941c98ffc4031e3ee5fe33675d627b18699e5ae52")
}

// UnpackUnauthorizedFacilitatorError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error UnauthorizedFacilitator()
func (uptoPermit2Proxy *UptoPermit2Proxy) UnpackUnauthorizedFacilitatorError(raw []byte) (*UptoPermit2ProxyUnauthorizedFacilitator, error) {
	out := new(UptoPermit2ProxyUnauthorizedFacilitator)
	if err := uptoPermit2Proxy.abi.UnpackIntoInterface(out, "UnauthorizedFacilitator", raw); err != nil {
		return nil, err
	}
	return out, nil
}
