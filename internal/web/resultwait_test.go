package web_test

// resultPage is a JavaScript condition: the page of a finished call has
// loaded whole and its result's status reads status ("" for any). A
// finished call loads its result page; the status badge comes first in
// the result's HTML, so under load it is parsed before the result's
// content, and before the deferred scripts that make the copy buttons,
// the JSON trees and the form work: a test that waited on the badge alone
// then read a result or clicked a button that was not there yet.
func resultPage(status string) string {
	cond := `document.readyState === "complete" && document.getElementById("result-status")`
	if status != "" {
		cond += ` && document.getElementById("result-status").textContent === ` + jsString(status)
	}
	return cond
}
