// The one name Cilium takes from sigs.k8s.io/mcs-api/controllers, which the
// module proxy does not serve. Written by scripts/build-cilium.sh --pin.
module sigs.k8s.io/mcs-api/controllers

go 1.24
