package kvbenchmark

import (
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/config"
)

// Several managers register a controller of the same name in one process.
func ctrlControllerOpts() config.Controller {
	return config.Controller{SkipNameValidation: ptr.To(true)}
}
