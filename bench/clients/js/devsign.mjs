// What the dev-signing programs share (devsign-ethers.mjs, devsign-viem.mjs;
// see bench/clients/devsign_test.go): the accounts the node signs for, and
// the EIP-712 example both libraries sign.

// The first and third of the ten dev accounts eth_accounts lists under --dev.
export const ACCOUNT1 = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266'
export const ACCOUNT3 = '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC'
export const DEV_ACCOUNTS = 10

export const MESSAGE = 'sign in to ledgerd'

// EIP-712's own example, on the node's chain.
export const DOMAIN = {
  name: 'Ether Mail', version: '1', chainId: 1293, verifyingContract: '0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC',
}
export const TYPES = {
  Person: [{ name: 'name', type: 'string' }, { name: 'wallet', type: 'address' }],
  Mail: [{ name: 'from', type: 'Person' }, { name: 'to', type: 'Person' }, { name: 'contents', type: 'string' }],
}
export const MAIL = {
  from: { name: 'Cow', wallet: '0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826' },
  to: { name: 'Bob', wallet: '0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB' },
  contents: 'Hello, Bob!',
}
