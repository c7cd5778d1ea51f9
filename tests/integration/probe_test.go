package integration

import (
	"context"
	"net/http"
	"net/http/httptest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/oaat-io/oaat-operator/controllers"
)

var _ = Describe("The manager's readiness check", func() {
	It("answers not ready until the caches of the groups and their pods synced, then ready", func(ctx SpecContext) {
		opts := controllers.CacheOptions()
		opts.Scheme = scheme
		c, err := cache.New(cfg, opts)
		Expect(err).NotTo(HaveOccurred())
		check := controllers.CachesSynced(c)
		probe := func() error { return check(httptest.NewRequest(http.MethodGet, "/readyz", http.NoBody)) }

		Expect(probe()).To(MatchError(ContainSubstring("has not synced yet")), "before the cache started")

		cacheCtx, stop := context.WithCancel(ctx)
		defer stop()
		go func() {
			defer GinkgoRecover()
			Expect(c.Start(cacheCtx)).To(Succeed())
		}()
		Eventually(probe).WithContext(ctx).Should(Succeed(), "once the cache started")
	}, SpecTimeout(specTimeout))
})
