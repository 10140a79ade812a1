// Package ui checks the node's web view (net/ui, GET /ui/) in a real
// browser: the test starts the real binary with bots trading
// (ledgerd --dev --compat --bots default on a free loopback port) and runs
// npm/check.mjs, which drives Debian's chromium with playwright-core
// (pinned in npm/package.json; it never downloads a browser), waits for
// book rows, a candle, the clearings, the tick clock and the committee,
// checks that the book moves and that the page logged no error, and saves
// a screenshot; the test then checks the PNG. make ui-screenshot refreshes
// docs/ui.png with it.
//
// Without chromium (or node and npm/node_modules) the test is skipped
// locally and fails when the environment variable CI is set: CI installs
// them (.ci/run, make ui-tools).
package ui
