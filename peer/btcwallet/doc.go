package btcwallet
