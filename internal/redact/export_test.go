package redact

// The black-box tests (package redact_test) decode JSON exactly as Value's callers do
// (numbers as json.Number) and size their inputs by the package's bounds, so that a
// change to a bound moves the tests too.

// Decode is decode, the JSON decoder Redactor.JSON uses.
var Decode = decode

// MinSecretLen is the shortest configured secret New keeps.
const MinSecretLen = minSecretLen

// MaxPending is the longest line a LineWriter holds before passing it on in pieces.
const MaxPending = maxPending
