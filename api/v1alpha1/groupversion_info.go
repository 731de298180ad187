// Package v1alpha1 holds the kvbench.io/v1alpha1 API: the KVBenchmark kind, and the types that
// the runner and the operator share (engine options, datasets, workloads, the runner's config and
// its versioned result schema).
//
// +kubebuilder:object:generate=true
// +groupName=kvbench.io
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of this API.
	GroupVersion = schema.GroupVersion{Group: "kvbench.io", Version: "v1alpha1"}

	// SchemeBuilder adds the types of this API to a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the types of this API to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
