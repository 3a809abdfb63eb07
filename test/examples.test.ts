// The examples that are test files run with the rest of the suite.
import "../examples/testing/workflow.test.js"
