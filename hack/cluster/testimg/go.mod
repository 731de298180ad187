// A separate module on purpose: the cluster's pause and test images are not part of the operator's build
// (`go test ./...` in the repository root does not descend into nested modules). Stdlib only.
module kvbench.local/testimg

go 1.26.0
