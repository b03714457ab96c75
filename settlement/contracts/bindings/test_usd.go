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

// TestUSDMetaData contains all meta data concerning the TestUSD contract.
var TestUSDMetaData = bind.MetaData{
	ABI: "[{\"inputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"constructor\"},{\"inputs\":[],\"name\":\"AuthorizationExpired\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"AuthorizationNotYetValid\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"AuthorizationUsedAlready\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"CallerMustBePayee\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"spender\",\"type\":\"address\"},{\"internalType\":\"uint256\",\"name\":\"allowance\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"needed\",\"type\":\"uint256\"}],\"name\":\"ERC20InsufficientAllowance\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"sender\",\"type\":\"address\"},{\"internalType\":\"uint256\",\"name\":\"balance\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"needed\",\"type\":\"uint256\"}],\"name\":\"ERC20InsufficientBalance\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"receiver\",\"type\":\"address\"}],\"name\":\"ERC20InvalidReceiver\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"InvalidSignature\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"NotMinter\",\"type\":\"error\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"address\",\"name\":\"owner\",\"type\":\"address\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"spender\",\"type\":\"address\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"value\",\"type\":\"uint256\"}],\"name\":\"Approval\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"address\",\"name\":\"authorizer\",\"type\":\"address\"},{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"nonce\",\"type\":\"bytes32\"}],\"name\":\"AuthorizationUsed\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"address\",\"name\":\"from\",\"type\":\"address\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"to\",\"type\":\"address\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"value\",\"type\":\"uint256\"}],\"name\":\"Transfer\",\"type\":\"event\"},{\"inputs\":[],\"name\":\"DOMAIN_SEPARATOR\",\"outputs\":[{\"internalType\":\"bytes32\",\"name\":\"\",\"type\":\"bytes32\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"RECEIVE_WITH_AUTHORIZATION_TYPEHASH\",\"outputs\":[{\"internalType\":\"bytes32\",\"name\":\"\",\"type\":\"bytes32\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"TRANSFER_WITH_AUTHORIZATION_TYPEHASH\",\"outputs\":[{\"internalType\":\"bytes32\",\"name\":\"\",\"type\":\"bytes32\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"\",\"type\":\"address\"}],\"name\":\"allowance\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"spender\",\"type\":\"address\"},{\"internalType\":\"uint256\",\"name\":\"value\",\"type\":\"uint256\"}],\"name\":\"approve\",\"outputs\":[{\"internalType\":\"bool\",\"name\":\"\",\"type\":\"bool\"}],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"\",\"type\":\"address\"},{\"internalType\":\"bytes32\",\"name\":\"\",\"type\":\"bytes32\"}],\"name\":\"authorizationState\",\"outputs\":[{\"internalType\":\"bool\",\"name\":\"\",\"type\":\"bool\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"\",\"type\":\"address\"}],\"name\":\"balanceOf\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"decimals\",\"outputs\":[{\"internalType\":\"uint8\",\"name\":\"\",\"type\":\"uint8\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"to\",\"type\":\"address\"},{\"internalType\":\"uint256\",\"name\":\"value\",\"type\":\"uint256\"}],\"name\":\"mint\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"minter\",\"outputs\":[{\"internalType\":\"address\",\"name\":\"\",\"type\":\"address\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"name\",\"outputs\":[{\"internalType\":\"string\",\"name\":\"\",\"type\":\"string\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"from\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"to\",\"type\":\"address\"},{\"internalType\":\"uint256\",\"name\":\"value\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"validAfter\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"validBefore\",\"type\":\"uint256\"},{\"internalType\":\"bytes32\",\"name\":\"nonce\",\"type\":\"bytes32\"},{\"internalType\":\"uint8\",\"name\":\"v\",\"type\":\"uint8\"},{\"internalType\":\"bytes32\",\"name\":\"r\",\"type\":\"bytes32\"},{\"internalType\":\"bytes32\",\"name\":\"s\",\"type\":\"bytes32\"}],\"name\":\"receiveWithAuthorization\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"symbol\",\"outputs\":[{\"internalType\":\"string\",\"name\":\"\",\"type\":\"string\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"totalSupply\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"to\",\"type\":\"address\"},{\"internalType\":\"uint256\",\"name\":\"value\",\"type\":\"uint256\"}],\"name\":\"transfer\",\"outputs\":[{\"internalType\":\"bool\",\"name\":\"\",\"type\":\"bool\"}],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"from\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"to\",\"type\":\"address\"},{\"internalType\":\"uint256\",\"name\":\"value\",\"type\":\"uint256\"}],\"name\":\"transferFrom\",\"outputs\":[{\"internalType\":\"bool\",\"name\":\"\",\"type\":\"bool\"}],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"from\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"to\",\"type\":\"address\"},{\"internalType\":\"uint256\",\"name\":\"value\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"validAfter\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"validBefore\",\"type\":\"uint256\"},{\"internalType\":\"bytes32\",\"name\":\"nonce\",\"type\":\"bytes32\"},{\"internalType\":\"uint8\",\"name\":\"v\",\"type\":\"uint8\"},{\"internalType\":\"bytes32\",\"name\":\"r\",\"type\":\"bytes32\"},{\"internalType\":\"bytes32\",\"name\":\"s\",\"type\":\"bytes32\"}],\"name\":\"transferWithAuthorization\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"version\",\"outputs\":[{\"internalType\":\"string\",\"name\":\"\",\"type\":\"string\"}],\"stateMutability\":\"view\",\"type\":\"function\"}]",
	ID:  "TestUSD",
	Bin: "0x60a0806040523460295733608052610f67908161002e82396080518181816108820152610bb30152f35b5f80fdfe60806040526004361015610011575f80fd5b5f3560e01c806306fdde0314610bd75780630754617214610b87578063095ea7b314610b0257806318160ddd14610ae657806323b872dd146109d2578063313ce567146109b75780633644e5151461099557806340c10f191461084e57806354fd4d50146107f757806370a08231146107b25780637f2eecc31461077857806395d89b411461071d578063a0cc6a68146106e3578063a9059cbb146106b2578063dd62ed3e14610644578063e3ee160e1461042d578063e94a0102146103d75763ef55bec6146100df575f80fd5b346103d3576100ed36610d2a565b929373ffffffffffffffffffffffffffffffffffffffff889798999699939293163381036103ab5789421115610383578142101561035b5773ffffffffffffffffffffffffffffffffffffffff8716998a5f52600360205260405f20875f5260205260ff60405f20541661033357610163610da2565b926040519160208301937fd099cc98ef71107a616c4f0f941f04c322d8e254fe26b3c6668db87aae413de885528d604085015260608401528b608084015260a083015260c08201528660e082015260e081526101c161010082610c2e565b5190206040519060208201927f190100000000000000000000000000000000000000000000000000000000000084526022830152604282015260428152610209606282610c2e565b5190207f7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a084116102f5576020935f9360ff60809460405194855216868401526040830152606082015282805260015afa156103285773ffffffffffffffffffffffffffffffffffffffff5f511685811591821561031d575b50506102f557846102f3955f52600360205260405f20825f5260205260405f2060017fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff008254161790557f98de503528ee59b575ef0c0a2576a82497bfc029a5685b209e9ec333479b10a55f80a3610e91565b005b7f8baa579f000000000000000000000000000000000000000000000000000000005f5260045ffd5b14159050855f610281565b6040513d5f823e3d90fd5b7f13981708000000000000000000000000000000000000000000000000000000005f5260045ffd5b7f0f05f5bf000000000000000000000000000000000000000000000000000000005f5260045ffd5b7fdf8e4372000000000000000000000000000000000000000000000000000000005f5260045ffd5b7f5454b17d000000000000000000000000000000000000000000000000000000005f5260045ffd5b5f80fd5b346103d35760406003193601126103d35773ffffffffffffffffffffffffffffffffffffffff610405610ce4565b165f52600360205260405f206024355f52602052602060ff60405f2054166040519015158152f35b346103d35761043b36610d2a565b9293859895979697929192421115610383578042101561035b5773ffffffffffffffffffffffffffffffffffffffff861698895f52600360205260405f20865f5260205260ff60405f20541661033357610493610da2565b916040519060208201927f7c7c6cdb67a18743f49ec6fa9b35f50d52ed05cbed4cc592e13b44501c1a226784528c604084015273ffffffffffffffffffffffffffffffffffffffff8b1660608401528b608084015260a083015260c08201528660e082015260e0815261050861010082610c2e565b5190206040519060208201927f190100000000000000000000000000000000000000000000000000000000000084526022830152604282015260428152610550606282610c2e565b5190207f7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a084116102f5576020935f9360ff60809460405194855216868401526040830152606082015282805260015afa156103285773ffffffffffffffffffffffffffffffffffffffff5f51168581159182156106395750506102f557846102f3955f52600360205260405f20825f5260205260405f2060017fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff008254161790557f98de503528ee59b575ef0c0a2576a82497bfc029a5685b209e9ec333479b10a55f80a3610e91565b141590508587610281565b346103d35760406003193601126103d35761065d610ce4565b73ffffffffffffffffffffffffffffffffffffffff61067a610d07565b91165f52600260205273ffffffffffffffffffffffffffffffffffffffff60405f2091165f52602052602060405f2054604051908152f35b346103d35760406003193601126103d3576106d86106ce610ce4565b6024359033610e91565b602060405160018152f35b346103d3575f6003193601126103d35760206040517f7c7c6cdb67a18743f49ec6fa9b35f50d52ed05cbed4cc592e13b44501c1a22678152f35b346103d3575f6003193601126103d35761077460405161073e604082610c2e565b600481527f7455534400000000000000000000000000000000000000000000000000000000602082015260405191829182610c9c565b0390f35b346103d3575f6003193601126103d35760206040517fd099cc98ef71107a616c4f0f941f04c322d8e254fe26b3c6668db87aae413de88152f35b346103d35760206003193601126103d35773ffffffffffffffffffffffffffffffffffffffff6107e0610ce4565b165f526001602052602060405f2054604051908152f35b346103d3575f6003193601126103d357610774604051610818604082610c2e565b600181527f3100000000000000000000000000000000000000000000000000000000000000602082015260405191829182610c9c565b346103d35760406003193601126103d357610867610ce4565b6024359073ffffffffffffffffffffffffffffffffffffffff7f000000000000000000000000000000000000000000000000000000000000000016330361096d5773ffffffffffffffffffffffffffffffffffffffff16908115610941575f54908082018092116109145760207fddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef915f9384558484526001825260408420818154019055604051908152a3005b7f4e487b71000000000000000000000000000000000000000000000000000000005f52601160045260245ffd5b7fec442f05000000000000000000000000000000000000000000000000000000005f525f60045260245ffd5b7ff8d2906c000000000000000000000000000000000000000000000000000000005f5260045ffd5b346103d3575f6003193601126103d35760206109af610da2565b604051908152f35b346103d3575f6003193601126103d357602060405160068152f35b346103d35760606003193601126103d3576109eb610ce4565b6109f3610d07565b6044359073ffffffffffffffffffffffffffffffffffffffff831692835f52600260205260405f2073ffffffffffffffffffffffffffffffffffffffff33165f5260205260405f2054937fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff8503610a70575b506106d89350610e91565b838510610ab257936106d8945f52600260205260405f2073ffffffffffffffffffffffffffffffffffffffff33165f526020528360405f209103905584610a65565b83857ffb8f41b2000000000000000000000000000000000000000000000000000000005f523360045260245260445260645ffd5b346103d3575f6003193601126103d35760205f54604051908152f35b346103d35760406003193601126103d357610b1b610ce4565b73ffffffffffffffffffffffffffffffffffffffff60243591335f52600260205260405f208282165f526020528260405f205560405192835216907f8c5be1e5ebec7d5bd14f71427d1e84f3dd0314c0f7b2291e5b200ac8c7c3b92560203392a3602060405160018152f35b346103d3575f6003193601126103d357602060405173ffffffffffffffffffffffffffffffffffffffff7f0000000000000000000000000000000000000000000000000000000000000000168152f35b346103d3575f6003193601126103d357610774604051610bf8604082610c2e565b601381527f536574746c65666c6f7720546573742055534400000000000000000000000000602082015260405191829182610c9c565b90601f7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe0910116810190811067ffffffffffffffff821117610c6f57604052565b7f4e487b71000000000000000000000000000000000000000000000000000000005f52604160045260245ffd5b7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe0601f602060409481855280519182918282880152018686015e5f8582860101520116010190565b6004359073ffffffffffffffffffffffffffffffffffffffff821682036103d357565b6024359073ffffffffffffffffffffffffffffffffffffffff821682036103d357565b6003196101209101126103d35760043573ffffffffffffffffffffffffffffffffffffffff811681036103d3579060243573ffffffffffffffffffffffffffffffffffffffff811681036103d3579060443590606435906084359060a4359060c43560ff811681036103d3579060e435906101043590565b604051610db0604082610c2e565b601381527f536574746c65666c6f7720546573742055534400000000000000000000000000602090910152604080517fedccfdd2e71f0f34186510a29a39c6a028431be888ee8300552a0016e3da6bda91610e0b9082610c2e565b6001815260208101907f310000000000000000000000000000000000000000000000000000000000000082525190206040519060208201927f8b73c3c69bb8fe3d512ecc4cf759cc79239f7b179b0ffacaa9a75d522b39400f8452604083015260608201524660808201523060a082015260a08152610e8b60c082610c2e565b51902090565b919073ffffffffffffffffffffffffffffffffffffffff169182156109415773ffffffffffffffffffffffffffffffffffffffff1690815f52600160205260405f2054818110610f2857817fddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef92602092855f52600184520360405f2055845f526001825260405f20818154019055604051908152a3565b827fe450d38c000000000000000000000000000000000000000000000000000000005f5260045260245260445260645ffdfea164736f6c634300081c000a",
}

// TestUSD is an auto generated Go binding around an Ethereum contract.
type TestUSD struct {
	abi abi.ABI
}

// GetABI returns the ABI associated with this contract binding.
func (c *TestUSD) GetABI() abi.ABI {
	return c.abi
}

// NewTestUSD creates a new instance of TestUSD.
func NewTestUSD() *TestUSD {
	parsed, err := TestUSDMetaData.ParseABI()
	if err != nil {
		panic(errors.New("invalid ABI: " + err.Error()))
	}
	return &TestUSD{abi: *parsed}
}

// Instance creates a wrapper for a deployed contract instance at the given address.
// Use this to create the instance object passed to abigen v2 library functions Call, Transact, etc.
func (c *TestUSD) Instance(backend bind.ContractBackend, addr common.Address) *bind.BoundContract {
	return bind.NewBoundContract(addr, c.abi, backend, backend, backend)
}

// PackDOMAINSEPARATOR is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x3644e515.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function DOMAIN_SEPARATOR() view returns(bytes32)
func (testUSD *TestUSD) PackDOMAINSEPARATOR() []byte {
	enc, err := testUSD.abi.Pack("DOMAIN_SEPARATOR")
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
func (testUSD *TestUSD) TryPackDOMAINSEPARATOR() ([]byte, error) {
	return testUSD.abi.Pack("DOMAIN_SEPARATOR")
}

// UnpackDOMAINSEPARATOR is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x3644e515.
//
// Solidity: function DOMAIN_SEPARATOR() view returns(bytes32)
func (testUSD *TestUSD) UnpackDOMAINSEPARATOR(data []byte) ([32]byte, error) {
	out, err := testUSD.abi.Unpack("DOMAIN_SEPARATOR", data)
	if err != nil {
		return *new([32]byte), err
	}
	out0 := *abi.ConvertType(out[0], new([32]byte)).(*[32]byte)
	return out0, nil
}

// PackRECEIVEWITHAUTHORIZATIONTYPEHASH is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x7f2eecc3.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function RECEIVE_WITH_AUTHORIZATION_TYPEHASH() view returns(bytes32)
func (testUSD *TestUSD) PackRECEIVEWITHAUTHORIZATIONTYPEHASH() []byte {
	enc, err := testUSD.abi.Pack("RECEIVE_WITH_AUTHORIZATION_TYPEHASH")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackRECEIVEWITHAUTHORIZATIONTYPEHASH is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x7f2eecc3.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function RECEIVE_WITH_AUTHORIZATION_TYPEHASH() view returns(bytes32)
func (testUSD *TestUSD) TryPackRECEIVEWITHAUTHORIZATIONTYPEHASH() ([]byte, error) {
	return testUSD.abi.Pack("RECEIVE_WITH_AUTHORIZATION_TYPEHASH")
}

// UnpackRECEIVEWITHAUTHORIZATIONTYPEHASH is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x7f2eecc3.
//
// Solidity: function RECEIVE_WITH_AUTHORIZATION_TYPEHASH() view returns(bytes32)
func (testUSD *TestUSD) UnpackRECEIVEWITHAUTHORIZATIONTYPEHASH(data []byte) ([32]byte, error) {
	out, err := testUSD.abi.Unpack("RECEIVE_WITH_AUTHORIZATION_TYPEHASH", data)
	if err != nil {
		return *new([32]byte), err
	}
	out0 := *abi.ConvertType(out[0], new([32]byte)).(*[32]byte)
	return out0, nil
}

// PackTRANSFERWITHAUTHORIZATIONTYPEHASH is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xa0cc6a68.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function TRANSFER_WITH_AUTHORIZATION_TYPEHASH() view returns(bytes32)
func (testUSD *TestUSD) PackTRANSFERWITHAUTHORIZATIONTYPEHASH() []byte {
	enc, err := testUSD.abi.Pack("TRANSFER_WITH_AUTHORIZATION_TYPEHASH")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackTRANSFERWITHAUTHORIZATIONTYPEHASH is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xa0cc6a68.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function TRANSFER_WITH_AUTHORIZATION_TYPEHASH() view returns(bytes32)
func (testUSD *TestUSD) TryPackTRANSFERWITHAUTHORIZATIONTYPEHASH() ([]byte, error) {
	return testUSD.abi.Pack("TRANSFER_WITH_AUTHORIZATION_TYPEHASH")
}

// UnpackTRANSFERWITHAUTHORIZATIONTYPEHASH is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xa0cc6a68.
//
// Solidity: function TRANSFER_WITH_AUTHORIZATION_TYPEHASH() view returns(bytes32)
func (testUSD *TestUSD) UnpackTRANSFERWITHAUTHORIZATIONTYPEHASH(data []byte) ([32]byte, error) {
	out, err := testUSD.abi.Unpack("TRANSFER_WITH_AUTHORIZATION_TYPEHASH", data)
	if err != nil {
		return *new([32]byte), err
	}
	out0 := *abi.ConvertType(out[0], new([32]byte)).(*[32]byte)
	return out0, nil
}

// PackAllowance is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xdd62ed3e.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function allowance(address , address ) view returns(uint256)
func (testUSD *TestUSD) PackAllowance(arg0 common.Address, arg1 common.Address) []byte {
	enc, err := testUSD.abi.Pack("allowance", arg0, arg1)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackAllowance is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xdd62ed3e.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function allowance(address , address ) view returns(uint256)
func (testUSD *TestUSD) TryPackAllowance(arg0 common.Address, arg1 common.Address) ([]byte, error) {
	return testUSD.abi.Pack("allowance", arg0, arg1)
}

// UnpackAllowance is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xdd62ed3e.
//
// Solidity: function allowance(address , address ) view returns(uint256)
func (testUSD *TestUSD) UnpackAllowance(data []byte) (*big.Int, error) {
	out, err := testUSD.abi.Unpack("allowance", data)
	if err != nil {
		return new(big.Int), err
	}
	out0 := abi.ConvertType(out[0], new(big.Int)).(*big.Int)
	return out0, nil
}

// PackApprove is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x095ea7b3.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function approve(address spender, uint256 value) returns(bool)
func (testUSD *TestUSD) PackApprove(spender common.Address, value *big.Int) []byte {
	enc, err := testUSD.abi.Pack("approve", spender, value)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackApprove is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x095ea7b3.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function approve(address spender, uint256 value) returns(bool)
func (testUSD *TestUSD) TryPackApprove(spender common.Address, value *big.Int) ([]byte, error) {
	return testUSD.abi.Pack("approve", spender, value)
}

// UnpackApprove is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x095ea7b3.
//
// Solidity: function approve(address spender, uint256 value) returns(bool)
func (testUSD *TestUSD) UnpackApprove(data []byte) (bool, error) {
	out, err := testUSD.abi.Unpack("approve", data)
	if err != nil {
		return *new(bool), err
	}
	out0 := *abi.ConvertType(out[0], new(bool)).(*bool)
	return out0, nil
}

// PackAuthorizationState is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xe94a0102.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function authorizationState(address , bytes32 ) view returns(bool)
func (testUSD *TestUSD) PackAuthorizationState(arg0 common.Address, arg1 [32]byte) []byte {
	enc, err := testUSD.abi.Pack("authorizationState", arg0, arg1)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackAuthorizationState is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xe94a0102.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function authorizationState(address , bytes32 ) view returns(bool)
func (testUSD *TestUSD) TryPackAuthorizationState(arg0 common.Address, arg1 [32]byte) ([]byte, error) {
	return testUSD.abi.Pack("authorizationState", arg0, arg1)
}

// UnpackAuthorizationState is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xe94a0102.
//
// Solidity: function authorizationState(address , bytes32 ) view returns(bool)
func (testUSD *TestUSD) UnpackAuthorizationState(data []byte) (bool, error) {
	out, err := testUSD.abi.Unpack("authorizationState", data)
	if err != nil {
		return *new(bool), err
	}
	out0 := *abi.ConvertType(out[0], new(bool)).(*bool)
	return out0, nil
}

// PackBalanceOf is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x70a08231.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function balanceOf(address ) view returns(uint256)
func (testUSD *TestUSD) PackBalanceOf(arg0 common.Address) []byte {
	enc, err := testUSD.abi.Pack("balanceOf", arg0)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackBalanceOf is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x70a08231.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function balanceOf(address ) view returns(uint256)
func (testUSD *TestUSD) TryPackBalanceOf(arg0 common.Address) ([]byte, error) {
	return testUSD.abi.Pack("balanceOf", arg0)
}

// UnpackBalanceOf is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x70a08231.
//
// Solidity: function balanceOf(address ) view returns(uint256)
func (testUSD *TestUSD) UnpackBalanceOf(data []byte) (*big.Int, error) {
	out, err := testUSD.abi.Unpack("balanceOf", data)
	if err != nil {
		return new(big.Int), err
	}
	out0 := abi.ConvertType(out[0], new(big.Int)).(*big.Int)
	return out0, nil
}

// PackDecimals is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x313ce567.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function decimals() view returns(uint8)
func (testUSD *TestUSD) PackDecimals() []byte {
	enc, err := testUSD.abi.Pack("decimals")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackDecimals is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x313ce567.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function decimals() view returns(uint8)
func (testUSD *TestUSD) TryPackDecimals() ([]byte, error) {
	return testUSD.abi.Pack("decimals")
}

// UnpackDecimals is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x313ce567.
//
// Solidity: function decimals() view returns(uint8)
func (testUSD *TestUSD) UnpackDecimals(data []byte) (uint8, error) {
	out, err := testUSD.abi.Unpack("decimals", data)
	if err != nil {
		return *new(uint8), err
	}
	out0 := *abi.ConvertType(out[0], new(uint8)).(*uint8)
	return out0, nil
}

// PackMint is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x40c10f19.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function mint(address to, uint256 value) returns()
func (testUSD *TestUSD) PackMint(to common.Address, value *big.Int) []byte {
	enc, err := testUSD.abi.Pack("mint", to, value)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackMint is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x40c10f19.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function mint(address to, uint256 value) returns()
func (testUSD *TestUSD) TryPackMint(to common.Address, value *big.Int) ([]byte, error) {
	return testUSD.abi.Pack("mint", to, value)
}

// PackMinter is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x07546172.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function minter() view returns(address)
func (testUSD *TestUSD) PackMinter() []byte {
	enc, err := testUSD.abi.Pack("minter")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackMinter is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x07546172.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function minter() view returns(address)
func (testUSD *TestUSD) TryPackMinter() ([]byte, error) {
	return testUSD.abi.Pack("minter")
}

// UnpackMinter is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x07546172.
//
// Solidity: function minter() view returns(address)
func (testUSD *TestUSD) UnpackMinter(data []byte) (common.Address, error) {
	out, err := testUSD.abi.Unpack("minter", data)
	if err != nil {
		return *new(common.Address), err
	}
	out0 := *abi.ConvertType(out[0], new(common.Address)).(*common.Address)
	return out0, nil
}

// PackName is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x06fdde03.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function name() view returns(string)
func (testUSD *TestUSD) PackName() []byte {
	enc, err := testUSD.abi.Pack("name")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackName is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x06fdde03.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function name() view returns(string)
func (testUSD *TestUSD) TryPackName() ([]byte, error) {
	return testUSD.abi.Pack("name")
}

// UnpackName is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x06fdde03.
//
// Solidity: function name() view returns(string)
func (testUSD *TestUSD) UnpackName(data []byte) (string, error) {
	out, err := testUSD.abi.Unpack("name", data)
	if err != nil {
		return *new(string), err
	}
	out0 := *abi.ConvertType(out[0], new(string)).(*string)
	return out0, nil
}

// PackReceiveWithAuthorization is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xef55bec6.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function receiveWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, uint8 v, bytes32 r, bytes32 s) returns()
func (testUSD *TestUSD) PackReceiveWithAuthorization(from common.Address, to common.Address, value *big.Int, validAfter *big.Int, validBefore *big.Int, nonce [32]byte, v uint8, r [32]byte, s [32]byte) []byte {
	enc, err := testUSD.abi.Pack("receiveWithAuthorization", from, to, value, validAfter, validBefore, nonce, v, r, s)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackReceiveWithAuthorization is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xef55bec6.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function receiveWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, uint8 v, bytes32 r, bytes32 s) returns()
func (testUSD *TestUSD) TryPackReceiveWithAuthorization(from common.Address, to common.Address, value *big.Int, validAfter *big.Int, validBefore *big.Int, nonce [32]byte, v uint8, r [32]byte, s [32]byte) ([]byte, error) {
	return testUSD.abi.Pack("receiveWithAuthorization", from, to, value, validAfter, validBefore, nonce, v, r, s)
}

// PackSymbol is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x95d89b41.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function symbol() view returns(string)
func (testUSD *TestUSD) PackSymbol() []byte {
	enc, err := testUSD.abi.Pack("symbol")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackSymbol is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x95d89b41.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function symbol() view returns(string)
func (testUSD *TestUSD) TryPackSymbol() ([]byte, error) {
	return testUSD.abi.Pack("symbol")
}

// UnpackSymbol is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x95d89b41.
//
// Solidity: function symbol() view returns(string)
func (testUSD *TestUSD) UnpackSymbol(data []byte) (string, error) {
	out, err := testUSD.abi.Unpack("symbol", data)
	if err != nil {
		return *new(string), err
	}
	out0 := *abi.ConvertType(out[0], new(string)).(*string)
	return out0, nil
}

// PackTotalSupply is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x18160ddd.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function totalSupply() view returns(uint256)
func (testUSD *TestUSD) PackTotalSupply() []byte {
	enc, err := testUSD.abi.Pack("totalSupply")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackTotalSupply is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x18160ddd.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function totalSupply() view returns(uint256)
func (testUSD *TestUSD) TryPackTotalSupply() ([]byte, error) {
	return testUSD.abi.Pack("totalSupply")
}

// UnpackTotalSupply is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x18160ddd.
//
// Solidity: function totalSupply() view returns(uint256)
func (testUSD *TestUSD) UnpackTotalSupply(data []byte) (*big.Int, error) {
	out, err := testUSD.abi.Unpack("totalSupply", data)
	if err != nil {
		return new(big.Int), err
	}
	out0 := abi.ConvertType(out[0], new(big.Int)).(*big.Int)
	return out0, nil
}

// PackTransfer is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xa9059cbb.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function transfer(address to, uint256 value) returns(bool)
func (testUSD *TestUSD) PackTransfer(to common.Address, value *big.Int) []byte {
	enc, err := testUSD.abi.Pack("transfer", to, value)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackTransfer is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xa9059cbb.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function transfer(address to, uint256 value) returns(bool)
func (testUSD *TestUSD) TryPackTransfer(to common.Address, value *big.Int) ([]byte, error) {
	return testUSD.abi.Pack("transfer", to, value)
}

// UnpackTransfer is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xa9059cbb.
//
// Solidity: function transfer(address to, uint256 value) returns(bool)
func (testUSD *TestUSD) UnpackTransfer(data []byte) (bool, error) {
	out, err := testUSD.abi.Unpack("transfer", data)
	if err != nil {
		return *new(bool), err
	}
	out0 := *abi.ConvertType(out[0], new(bool)).(*bool)
	return out0, nil
}

// PackTransferFrom is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x23b872dd.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function transferFrom(address from, address to, uint256 value) returns(bool)
func (testUSD *TestUSD) PackTransferFrom(from common.Address, to common.Address, value *big.Int) []byte {
	enc, err := testUSD.abi.Pack("transferFrom", from, to, value)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackTransferFrom is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x23b872dd.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function transferFrom(address from, address to, uint256 value) returns(bool)
func (testUSD *TestUSD) TryPackTransferFrom(from common.Address, to common.Address, value *big.Int) ([]byte, error) {
	return testUSD.abi.Pack("transferFrom", from, to, value)
}

// UnpackTransferFrom is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x23b872dd.
//
// Solidity: function transferFrom(address from, address to, uint256 value) returns(bool)
func (testUSD *TestUSD) UnpackTransferFrom(data []byte) (bool, error) {
	out, err := testUSD.abi.Unpack("transferFrom", data)
	if err != nil {
		return *new(bool), err
	}
	out0 := *abi.ConvertType(out[0], new(bool)).(*bool)
	return out0, nil
}

// PackTransferWithAuthorization is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xe3ee160e.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, uint8 v, bytes32 r, bytes32 s) returns()
func (testUSD *TestUSD) PackTransferWithAuthorization(from common.Address, to common.Address, value *big.Int, validAfter *big.Int, validBefore *big.Int, nonce [32]byte, v uint8, r [32]byte, s [32]byte) []byte {
	enc, err := testUSD.abi.Pack("transferWithAuthorization", from, to, value, validAfter, validBefore, nonce, v, r, s)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackTransferWithAuthorization is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xe3ee160e.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, uint8 v, bytes32 r, bytes32 s) returns()
func (testUSD *TestUSD) TryPackTransferWithAuthorization(from common.Address, to common.Address, value *big.Int, validAfter *big.Int, validBefore *big.Int, nonce [32]byte, v uint8, r [32]byte, s [32]byte) ([]byte, error) {
	return testUSD.abi.Pack("transferWithAuthorization", from, to, value, validAfter, validBefore, nonce, v, r, s)
}

// PackVersion is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x54fd4d50.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function version() view returns(string)
func (testUSD *TestUSD) PackVersion() []byte {
	enc, err := testUSD.abi.Pack("version")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackVersion is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x54fd4d50.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function version() view returns(string)
func (testUSD *TestUSD) TryPackVersion() ([]byte, error) {
	return testUSD.abi.Pack("version")
}

// UnpackVersion is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x54fd4d50.
//
// Solidity: function version() view returns(string)
func (testUSD *TestUSD) UnpackVersion(data []byte) (string, error) {
	out, err := testUSD.abi.Unpack("version", data)
	if err != nil {
		return *new(string), err
	}
	out0 := *abi.ConvertType(out[0], new(string)).(*string)
	return out0, nil
}

// TestUSDApproval represents a Approval event raised by the TestUSD contract.
type TestUSDApproval struct {
	Owner   common.Address
	Spender common.Address
	Value   *big.Int
	Raw     *types.Log // Blockchain specific contextual infos
}

const TestUSDApprovalEventName = "Approval"

// ContractEventName returns the user-defined event name.
func (TestUSDApproval) ContractEventName() string {
	return TestUSDApprovalEventName
}

// UnpackApprovalEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event Approval(address indexed owner, address indexed spender, uint256 value)
func (testUSD *TestUSD) UnpackApprovalEvent(log *types.Log) (*TestUSDApproval, error) {
	event := "Approval"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != testUSD.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(TestUSDApproval)
	if len(log.Data) > 0 {
		if err := testUSD.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range testUSD.abi.Events[event].Inputs {
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

// TestUSDAuthorizationUsed represents a AuthorizationUsed event raised by the TestUSD contract.
type TestUSDAuthorizationUsed struct {
	Authorizer common.Address
	Nonce      [32]byte
	Raw        *types.Log // Blockchain specific contextual infos
}

const TestUSDAuthorizationUsedEventName = "AuthorizationUsed"

// ContractEventName returns the user-defined event name.
func (TestUSDAuthorizationUsed) ContractEventName() string {
	return TestUSDAuthorizationUsedEventName
}

// UnpackAuthorizationUsedEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)
func (testUSD *TestUSD) UnpackAuthorizationUsedEvent(log *types.Log) (*TestUSDAuthorizationUsed, error) {
	event := "AuthorizationUsed"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != testUSD.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(TestUSDAuthorizationUsed)
	if len(log.Data) > 0 {
		if err := testUSD.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range testUSD.abi.Events[event].Inputs {
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

// TestUSDTransfer represents a Transfer event raised by the TestUSD contract.
type TestUSDTransfer struct {
	From  common.Address
	To    common.Address
	Value *big.Int
	Raw   *types.Log // Blockchain specific contextual infos
}

const TestUSDTransferEventName = "Transfer"

// ContractEventName returns the user-defined event name.
func (TestUSDTransfer) ContractEventName() string {
	return TestUSDTransferEventName
}

// UnpackTransferEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event Transfer(address indexed from, address indexed to, uint256 value)
func (testUSD *TestUSD) UnpackTransferEvent(log *types.Log) (*TestUSDTransfer, error) {
	event := "Transfer"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != testUSD.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(TestUSDTransfer)
	if len(log.Data) > 0 {
		if err := testUSD.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range testUSD.abi.Events[event].Inputs {
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
func (testUSD *TestUSD) UnpackError(raw []byte) (any, error) {
	if bytes.Equal(raw[:4], testUSD.abi.Errors["AuthorizationExpired"].ID.Bytes()[:4]) {
		return testUSD.UnpackAuthorizationExpiredError(raw[4:])
	}
	if bytes.Equal(raw[:4], testUSD.abi.Errors["AuthorizationNotYetValid"].ID.Bytes()[:4]) {
		return testUSD.UnpackAuthorizationNotYetValidError(raw[4:])
	}
	if bytes.Equal(raw[:4], testUSD.abi.Errors["AuthorizationUsedAlready"].ID.Bytes()[:4]) {
		return testUSD.UnpackAuthorizationUsedAlreadyError(raw[4:])
	}
	if bytes.Equal(raw[:4], testUSD.abi.Errors["CallerMustBePayee"].ID.Bytes()[:4]) {
		return testUSD.UnpackCallerMustBePayeeError(raw[4:])
	}
	if bytes.Equal(raw[:4], testUSD.abi.Errors["ERC20InsufficientAllowance"].ID.Bytes()[:4]) {
		return testUSD.UnpackERC20InsufficientAllowanceError(raw[4:])
	}
	if bytes.Equal(raw[:4], testUSD.abi.Errors["ERC20InsufficientBalance"].ID.Bytes()[:4]) {
		return testUSD.UnpackERC20InsufficientBalanceError(raw[4:])
	}
	if bytes.Equal(raw[:4], testUSD.abi.Errors["ERC20InvalidReceiver"].ID.Bytes()[:4]) {
		return testUSD.UnpackERC20InvalidReceiverError(raw[4:])
	}
	if bytes.Equal(raw[:4], testUSD.abi.Errors["InvalidSignature"].ID.Bytes()[:4]) {
		return testUSD.UnpackInvalidSignatureError(raw[4:])
	}
	if bytes.Equal(raw[:4], testUSD.abi.Errors["NotMinter"].ID.Bytes()[:4]) {
		return testUSD.UnpackNotMinterError(raw[4:])
	}
	return nil, errors.New("Unknown error")
}

// TestUSDAuthorizationExpired represents a AuthorizationExpired error raised by the TestUSD contract.
type TestUSDAuthorizationExpired struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error AuthorizationExpired()
func TestUSDAuthorizationExpiredErrorID() common.Hash {
	return common.HexToHash("0x0f05f5bfa72101059ba5651871d96682a3f2a996379bb3603e7e1b277b73f5ac")
}

// UnpackAuthorizationExpiredError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error AuthorizationExpired()
func (testUSD *TestUSD) UnpackAuthorizationExpiredError(raw []byte) (*TestUSDAuthorizationExpired, error) {
	out := new(TestUSDAuthorizationExpired)
	if err := testUSD.abi.UnpackIntoInterface(out, "AuthorizationExpired", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// TestUSDAuthorizationNotYetValid represents a AuthorizationNotYetValid error raised by the TestUSD contract.
type TestUSDAuthorizationNotYetValid struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error AuthorizationNotYetValid()
func TestUSDAuthorizationNotYetValidErrorID() common.Hash {
	return common.HexToHash("0xdf8e43724eb8871a7e094011d490881199ac1cedece22088767823602eee8330")
}

// UnpackAuthorizationNotYetValidError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error AuthorizationNotYetValid()
func (testUSD *TestUSD) UnpackAuthorizationNotYetValidError(raw []byte) (*TestUSDAuthorizationNotYetValid, error) {
	out := new(TestUSDAuthorizationNotYetValid)
	if err := testUSD.abi.UnpackIntoInterface(out, "AuthorizationNotYetValid", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// TestUSDAuthorizationUsedAlready represents a AuthorizationUsedAlready error raised by the TestUSD contract.
type TestUSDAuthorizationUsedAlready struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error AuthorizationUsedAlready()
func TestUSDAuthorizationUsedAlreadyErrorID() common.Hash {
	return common.HexToHash("0x139817083a33fccb5cd664e0323761a739dabe7da648851effa096c4d6bd82cc")
}

// UnpackAuthorizationUsedAlreadyError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error AuthorizationUsedAlready()
func (testUSD *TestUSD) UnpackAuthorizationUsedAlreadyError(raw []byte) (*TestUSDAuthorizationUsedAlready, error) {
	out := new(TestUSDAuthorizationUsedAlready)
	if err := testUSD.abi.UnpackIntoInterface(out, "AuthorizationUsedAlready", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// TestUSDCallerMustBePayee represents a CallerMustBePayee error raised by the TestUSD contract.
type TestUSDCallerMustBePayee struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error CallerMustBePayee()
func TestUSDCallerMustBePayeeErrorID() common.Hash {
	return common.HexToHash("0x5454b17d0d08b6ac6e21b2f5afcaa1df5a9a56a39a7853a9f833d9c08ffb3ff9")
}

// UnpackCallerMustBePayeeError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error CallerMustBePayee()
func (testUSD *TestUSD) UnpackCallerMustBePayeeError(raw []byte) (*TestUSDCallerMustBePayee, error) {
	out := new(TestUSDCallerMustBePayee)
	if err := testUSD.abi.UnpackIntoInterface(out, "CallerMustBePayee", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// TestUSDERC20InsufficientAllowance represents a ERC20InsufficientAllowance error raised by the TestUSD contract.
type TestUSDERC20InsufficientAllowance struct {
	Spender   common.Address
	Allowance *big.Int
	Needed    *big.Int
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error ERC20InsufficientAllowance(address spender, uint256 allowance, uint256 needed)
func TestUSDERC20InsufficientAllowanceErrorID() common.Hash {
	return common.HexToHash("0xfb8f41b23e99d2101d86da76cdfa87dd51c82ed07d3cb62cbc473e469dbc75c3")
}

// UnpackERC20InsufficientAllowanceError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error ERC20InsufficientAllowance(address spender, uint256 allowance, uint256 needed)
func (testUSD *TestUSD) UnpackERC20InsufficientAllowanceError(raw []byte) (*TestUSDERC20InsufficientAllowance, error) {
	out := new(TestUSDERC20InsufficientAllowance)
	if err := testUSD.abi.UnpackIntoInterface(out, "ERC20InsufficientAllowance", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// TestUSDERC20InsufficientBalance represents a ERC20InsufficientBalance error raised by the TestUSD contract.
type TestUSDERC20InsufficientBalance struct {
	Sender  common.Address
	Balance *big.Int
	Needed  *big.Int
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error ERC20InsufficientBalance(address sender, uint256 balance, uint256 needed)
func TestUSDERC20InsufficientBalanceErrorID() common.Hash {
	return common.HexToHash("0xe450d38cd8d9f7d95077d567d60ed49c7254716e6ad08fc9872816c97e0ffec6")
}

// UnpackERC20InsufficientBalanceError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error ERC20InsufficientBalance(address sender, uint256 balance, uint256 needed)
func (testUSD *TestUSD) UnpackERC20InsufficientBalanceError(raw []byte) (*TestUSDERC20InsufficientBalance, error) {
	out := new(TestUSDERC20InsufficientBalance)
	if err := testUSD.abi.UnpackIntoInterface(out, "ERC20InsufficientBalance", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// TestUSDERC20InvalidReceiver represents a ERC20InvalidReceiver error raised by the TestUSD contract.
type TestUSDERC20InvalidReceiver struct {
	Receiver common.Address
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error ERC20InvalidReceiver(address receiver)
func TestUSDERC20InvalidReceiverErrorID() common.Hash {
	return common.HexToHash("0xec442f055133b72f3b2f9f0bb351c406b178527de2040a7d1feb4e058771f613")
}

// UnpackERC20InvalidReceiverError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error ERC20InvalidReceiver(address receiver)
func (testUSD *TestUSD) UnpackERC20InvalidReceiverError(raw []byte) (*TestUSDERC20InvalidReceiver, error) {
	out := new(TestUSDERC20InvalidReceiver)
	if err := testUSD.abi.UnpackIntoInterface(out, "ERC20InvalidReceiver", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// TestUSDInvalidSignature represents a InvalidSignature error raised by the TestUSD contract.
type TestUSDInvalidSignature struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error InvalidSignature()
func TestUSDInvalidSignatureErrorID() common.Hash {
	return common.HexToHash("0x8baa579fce362245063d36f11747a89dd489c54795634fc673cc0e0db51fedc5")
}

// UnpackInvalidSignatureError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error InvalidSignature()
func (testUSD *TestUSD) UnpackInvalidSignatureError(raw []byte) (*TestUSDInvalidSignature, error) {
	out := new(TestUSDInvalidSignature)
	if err := testUSD.abi.UnpackIntoInterface(out, "InvalidSignature", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// TestUSDNotMinter represents a NotMinter error raised by the TestUSD contract.
type TestUSDNotMinter struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error NotMinter()
func TestUSDNotMinterErrorID() common.Hash {
	return common.HexToHash("0xf8d2906ce84a96639fbeeedc84c13a0873e5d5e48a49a084ea78b44722550223")
}

// UnpackNotMinterError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error NotMinter()
func (testUSD *TestUSD) UnpackNotMinterError(raw []byte) (*TestUSDNotMinter, error) {
	out := new(TestUSDNotMinter)
	if err := testUSD.abi.UnpackIntoInterface(out, "NotMinter", raw); err != nil {
		return nil, err
	}
	return out, nil
}
