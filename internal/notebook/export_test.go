package notebook

// The black-box tests (package notebook_test) count the results written into a document by
// the marker that opens each one.

// ResultMarker opens every result Run writes into a document.
const ResultMarker = markerOpen
