// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// The ERC-20 calls the bridge makes.
interface IERC20Min {
    function transfer(address to, uint256 amount) external returns (bool);
    function transferFrom(address from, address to, uint256 amount) external returns (bool);
}

/// Bridge is the bridged chain's side of the ledger's bridge (docs/bridge.md
/// §4, §6): it locks deposits and announces them with Deposit events, and
/// pays out claims certified by the ledger's validator committee. A claim
/// is checked as core/claim.Verify does: the claim hash recomputed from the
/// call, a certificate of signatures in strictly ascending signer order, each
/// signer an active validator, at least validatorCount - f of them, each
/// claim hash paid once. No limits, pausing or upgrades: a test contract.
contract Bridge {
    error NotOwner();
    error ZeroAddress();
    error ZeroAmount();
    error TokenNotWhitelisted();
    error TokenAlreadyWhitelisted();
    error DuplicateValidator();
    error InvalidFaultTolerance();
    error TransferFailed();
    error RequestAlreadyProcessed();
    error InvalidProofType();
    error InvalidProofLength();
    error InvalidSignature();
    error InvalidSignatureOrder();
    error SignerNotActiveValidator();
    error InsufficientValidatorWeight();

    event Deposit(bytes32 indexed id, address indexed token, uint256 amount, address indexed to);
    event Claim(bytes32 indexed id, address mirrorToken, address token, uint256 amount, address indexed to);

    bytes4 internal constant DEPOSIT_SELECTOR = bytes4(keccak256("deposit(address,uint256,address)"));
    uint256 internal constant SIG_LEN = 65;

    address public immutable owner;
    /// The ledger's Bridge application (0x50d…0001): the claim hash's "to".
    address public immutable ledgerBridge;
    bytes32 public immutable domainSeparator;
    uint256 public immutable validatorCount;
    uint256 public immutable faultTolerance;

    /// The last deposit id handed out; ids start at 1 (the ledger reads a
    /// zero deposit id as "derive one").
    uint256 public depositCount;
    mapping(address => bool) public activeValidators;
    /// The ledger-side token of each whitelisted token of this chain.
    mapping(address => address) public mirrorToken;
    mapping(bytes32 => bool) public processedRequests;

    constructor(address[] memory validators, uint256 f, uint256 ledgerChainId, uint256 version, address ledgerBridge_) {
        if (ledgerBridge_ == address(0)) revert ZeroAddress();
        for (uint256 i = 0; i < validators.length; ++i) {
            address v = validators[i];
            if (v == address(0)) revert ZeroAddress();
            if (activeValidators[v]) revert DuplicateValidator();
            activeValidators[v] = true;
        }
        if (validators.length == 0 || f >= validators.length) revert InvalidFaultTolerance();
        owner = msg.sender;
        ledgerBridge = ledgerBridge_;
        validatorCount = validators.length;
        faultTolerance = f;
        domainSeparator = keccak256(
            abi.encode(keccak256("pod network"), keccak256("attest_tx_bridge"), ledgerChainId, version)
        );
    }

    /// whitelistToken pairs token (this chain) with mirror (the ledger's).
    function whitelistToken(address token, address mirror) external {
        if (msg.sender != owner) revert NotOwner();
        if (token == address(0) || mirror == address(0)) revert ZeroAddress();
        if (mirrorToken[token] != address(0)) revert TokenAlreadyWhitelisted();
        mirrorToken[token] = mirror;
    }

    /// deposit pulls amount of token from the caller (approved beforehand)
    /// and announces it for the ledger account to.
    function deposit(address token, uint256 amount, address to) external returns (bytes32 id) {
        if (mirrorToken[token] == address(0)) revert TokenNotWhitelisted();
        if (to == address(0)) revert ZeroAddress();
        if (amount == 0) revert ZeroAmount();
        if (!IERC20Min(token).transferFrom(msg.sender, address(this), amount)) revert TransferFailed();
        id = bytes32(++depositCount);
        emit Deposit(id, token, amount, to);
    }

    /// claimHash is what the validators sign for a withdrawal of amount
    /// (this chain's decimals) of token to to (core/claim.Hash).
    function claimHash(address token, uint256 amount, address to, bytes calldata auxTxSuffix)
        public
        view
        returns (bytes32)
    {
        address mirror = mirrorToken[token];
        if (mirror == address(0)) revert TokenNotWhitelisted();
        bytes32 dataHash = keccak256(abi.encodePacked(DEPOSIT_SELECTOR, abi.encode(mirror, amount, to)));
        return keccak256(abi.encodePacked(domainSeparator, abi.encode(ledgerBridge), dataHash, auxTxSuffix));
    }

    /// claim pays amount of token to to once, given the committee's proof.
    function claim(address token, uint256 amount, address to, bytes calldata proof, bytes calldata auxTxSuffix)
        external
    {
        bytes32 h = claimHash(token, amount, to, auxTxSuffix);
        if (processedRequests[h]) revert RequestAlreadyProcessed();
        verifyCertificate(h, proof);
        processedRequests[h] = true;
        if (!IERC20Min(token).transfer(to, amount)) revert TransferFailed();
        emit Claim(h, mirrorToken[token], token, amount, to);
    }

    function verifyCertificate(bytes32 h, bytes calldata proof) internal view {
        if (proof.length == 0 || uint8(proof[0]) != 0) revert InvalidProofType();
        uint256 sigBytes = proof.length - 1;
        if (sigBytes % SIG_LEN != 0) revert InvalidProofLength();
        uint256 count = sigBytes / SIG_LEN;
        address last = address(0);
        for (uint256 i = 0; i < count; ++i) {
            uint256 at = 1 + i * SIG_LEN;
            bytes32 r = bytes32(proof[at:at + 32]);
            bytes32 s = bytes32(proof[at + 32:at + 64]);
            uint8 v = uint8(proof[at + 64]);
            address signer = ecrecover(h, v, r, s);
            if (signer == address(0)) revert InvalidSignature();
            if (signer <= last) revert InvalidSignatureOrder();
            if (!activeValidators[signer]) revert SignerNotActiveValidator();
            last = signer;
        }
        if (count < validatorCount - faultTolerance) revert InsufficientValidatorWeight();
    }
}
