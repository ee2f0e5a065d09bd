package chain

import (
	"math/big"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// TestNet4Net is testnet4's network magic: the message start bytes
// 1c 16 3f 28 of BIP 94, read as a little-endian uint32 as wire does.
const TestNet4Net wire.BitcoinNet = 0x283f161c

// testNet4GenesisCoinbase is the coinbase of testnet4's genesis block, as
// BIP 94 gives it: the message pushed after the usual bits and extra-nonce
// pushes, and an output to a 33-byte all-zero public key.
var testNet4GenesisCoinbase = wire.MsgTx{
	Version: 1,
	TxIn: []*wire.TxIn{{
		PreviousOutPoint: wire.OutPoint{Index: wire.MaxPrevOutIndex},
		SignatureScript: append([]byte{
			0x04, 0xff, 0xff, 0x00, 0x1d, // push 0x1d00ffff
			0x01, 0x04, // push 4
			0x4c, 0x4c, // OP_PUSHDATA1, 76 bytes
		}, "03/May/2024 000000000000000000001ebd58c244970b3aa9d783bb001011fbe8ea8e98e00e"...),
		Sequence: wire.MaxTxInSequenceNum,
	}},
	TxOut: []*wire.TxOut{{
		Value: 50 * 100_000_000,
		// A push of 33 zero bytes, then OP_CHECKSIG.
		PkScript: append(append([]byte{0x21}, make([]byte, 33)...), 0xac),
	}},
}

// testNet4GenesisMerkleRoot is the hash of the genesis coinbase, written
// here in display order; in the header its bytes read 4e7b2b91...a07a.
var testNet4GenesisMerkleRoot = mustHash("7aa0a7ae1e223414cb807e40cd57e667b718e42aaf9306db9102fe28912b7b4e")

var testNet4GenesisBlock = wire.MsgBlock{
	Header: wire.BlockHeader{
		Version:    1,
		MerkleRoot: *testNet4GenesisMerkleRoot,
		Timestamp:  time.Unix(1714777860, 0), // 2024-05-03 23:11:00 UTC
		Bits:       0x1d00ffff,
		Nonce:      393743547,
	},
	Transactions: []*wire.MsgTx{&testNet4GenesisCoinbase},
}

// TestNet4Params are the parameters of testnet4 (BIP 94), which btcd
// v0.24.2 does not define. The values are BIP 94's and Bitcoin Core's
// (src/kernel/chainparams.cpp, CTestNet4Params): magic 0x283f161c, port
// 48333, testnet3's proof-of-work limit, two-week retargets with the
// 20-minute minimum-difficulty exception, and the soft forks BIP 34, 65 and
// 66 active from block 1. Address prefixes, the bech32 part "tb" and the
// BIP 32 key magics are testnet3's, so addresses decode alike on both.
//
// On top of the testnet3 difficulty rules, a Chain on this network applies
// BIP 94's two changes (see BIP94): a retarget starts from the bits of the
// first block of the period, not the last, and the first block of a period
// may not be dated more than 600 seconds before its parent.
//
// The block checkpoints are the two testnet4 blocks Bitcoin Core names with
// their heights: its assumeutxo snapshot block at 90,000 and its default
// assume-valid block at 91,000.
//
// The parameters are not registered with chaincfg.Register: nothing in
// btcutil needs it, since testnet3, which chaincfg registers, has the same
// address prefixes, and a registration here would collide with any later
// btcd or library release that registers its own testnet4.
var TestNet4Params = chaincfg.Params{
	Name:        "testnet4",
	Net:         TestNet4Net,
	DefaultPort: "48333",
	DNSSeeds: []chaincfg.DNSSeed{
		// Bitcoin Core's seeds; whether they answer service-bit
		// queries is not known here, so none are asked.
		{Host: "seed.testnet4.bitcoin.sprovoost.nl"},
		{Host: "seed.testnet4.wiz.biz"},
	},

	GenesisBlock:             &testNet4GenesisBlock,
	GenesisHash:              mustHash("00000000da84f2bafbbc53dee25a72ae507ff4914b867c565be350b0da8bf043"),
	PowLimit:                 new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 224), big.NewInt(1)),
	PowLimitBits:             0x1d00ffff,
	BIP0034Height:            1,
	BIP0065Height:            1,
	BIP0066Height:            1,
	CoinbaseMaturity:         100,
	SubsidyReductionInterval: 210000,
	TargetTimespan:           14 * 24 * time.Hour,
	TargetTimePerBlock:       10 * time.Minute,
	RetargetAdjustmentFactor: 4,
	ReduceMinDifficulty:      true,
	MinDiffReductionTime:     20 * time.Minute,

	Checkpoints: []chaincfg.Checkpoint{
		{Height: 90000, Hash: mustHash("0000000002ebe8bcda020e0dd6ccfbdfac531d2f6a81457191b99fc2df2dbe3b")},
		{Height: 91000, Hash: mustHash("000000000000000180a58e7fa3b0db84b5ea76377524894f53660d93ac839d9b")},
	},

	// Version-bits deployments are not consulted by the header chain;
	// on testnet4 every soft fork up to taproot is active from the start.
	RuleChangeActivationThreshold: 1512,
	MinerConfirmationWindow:       2016,
	Deployments: [chaincfg.DefinedDeployments]chaincfg.ConsensusDeployment{
		chaincfg.DeploymentTestDummy:              alwaysActive(28),
		chaincfg.DeploymentTestDummyMinActivation: alwaysActive(22),
		chaincfg.DeploymentCSV:                    alwaysActive(0),
		chaincfg.DeploymentSegwit:                 alwaysActive(1),
		chaincfg.DeploymentTaproot:                alwaysActive(2),
	},

	RelayNonStdTxs: true,

	Bech32HRPSegwit:         chaincfg.TestNet3Params.Bech32HRPSegwit,
	PubKeyHashAddrID:        chaincfg.TestNet3Params.PubKeyHashAddrID,
	ScriptHashAddrID:        chaincfg.TestNet3Params.ScriptHashAddrID,
	WitnessPubKeyHashAddrID: chaincfg.TestNet3Params.WitnessPubKeyHashAddrID,
	WitnessScriptHashAddrID: chaincfg.TestNet3Params.WitnessScriptHashAddrID,
	PrivateKeyID:            chaincfg.TestNet3Params.PrivateKeyID,
	HDPrivateKeyID:          chaincfg.TestNet3Params.HDPrivateKeyID,
	HDPublicKeyID:           chaincfg.TestNet3Params.HDPublicKeyID,
	HDCoinType:              chaincfg.TestNet3Params.HDCoinType,
}

// alwaysActive is a deployment open for voting from the start, never
// expiring, as btcd writes its regression-test deployments.
func alwaysActive(bit uint8) chaincfg.ConsensusDeployment {
	return chaincfg.ConsensusDeployment{
		BitNumber:         bit,
		DeploymentStarter: chaincfg.NewMedianTimeDeploymentStarter(time.Time{}),
		DeploymentEnder:   chaincfg.NewMedianTimeDeploymentEnder(time.Time{}),
	}
}

// BIP94 reports whether params follow BIP 94's difficulty and time-warp
// rules: testnet4 does, recognised by its network magic so that a copy of
// TestNet4Params keeps them.
func BIP94(params *chaincfg.Params) bool { return params.Net == TestNet4Net }

// mustHash parses a hash written in display (reversed) order; only for
// constants of this package.
func mustHash(s string) *chainhash.Hash {
	h, err := chainhash.NewHashFromStr(s)
	if err != nil {
		panic(err)
	}
	return h
}
