package control

import "time"

// SetHistoryReadTimeout shortens how long a history read waits for the database, until
// restore; the black-box tests make a database that never answers.
func SetHistoryReadTimeout(d time.Duration) (restore func()) {
	old := historyReadTimeout
	historyReadTimeout = d
	return func() { historyReadTimeout = old }
}
