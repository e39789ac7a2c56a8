// CoreDNS for the networking scenario: CoreDNS's own server (coremain) with only the plugins the
// scenario's Corefile uses — bind (loopback only), file (the clusterset.local zone gitfleet renders), errors and log —
// so the build pulls none of the cloud providers' SDKs.
package main

import (
	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/file"
	_ "github.com/coredns/coredns/plugin/log"

	"github.com/coredns/coredns/coremain"
)

func main() {
	coremain.Run()
}
