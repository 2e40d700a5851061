package testpg

// ExecErr is exec1, Exec without the test failure: the black-box tests (package
// testpg_test) check the error a statement gets in a database it must not see.
var ExecErr = exec1
