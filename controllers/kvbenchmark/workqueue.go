package kvbenchmark

import (
	"sync"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// newPriorityQueue is controller-runtime's priority queue, made to let its workers go when it
// shuts down: in v0.21.0 a Get after ShutDown blocks for ever (kubernetes-sigs/controller-runtime
// issue 3239, fixed in v0.22, which needs Kubernetes 0.34 libraries), so a stopping manager waited
// out its grace period. Drop this wrapper when the module moves to v0.22.
func newPriorityQueue(name string, rl workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
	return &stoppableQueue{
		PriorityQueue: priorityqueue.New(name, func(o *priorityqueue.Opts[reconcile.Request]) { o.RateLimiter = rl }),
		done:          make(chan struct{}),
	}
}

type stoppableQueue struct {
	priorityqueue.PriorityQueue[reconcile.Request]
	done chan struct{}
	once sync.Once
}

func (q *stoppableQueue) ShutDown() {
	q.once.Do(func() { close(q.done) })
	q.PriorityQueue.ShutDown()
}

func (q *stoppableQueue) ShutDownWithDrain() { q.ShutDown() }

// GetWithPriority returns the next item, or shutdown once the queue is shut down, even when the
// inner queue's Get would block (the goroutine left waiting then ends with the process).
func (q *stoppableQueue) GetWithPriority() (reconcile.Request, int, bool) {
	select {
	case <-q.done:
		return reconcile.Request{}, 0, true
	default:
	}
	type item struct {
		req      reconcile.Request
		priority int
		shutdown bool
	}
	got := make(chan item, 1)
	go func() {
		r, p, s := q.PriorityQueue.GetWithPriority()
		got <- item{r, p, s}
	}()
	select {
	case it := <-got:
		return it.req, it.priority, it.shutdown
	case <-q.done:
		return reconcile.Request{}, 0, true
	}
}

func (q *stoppableQueue) Get() (reconcile.Request, bool) {
	r, _, shutdown := q.GetWithPriority()
	return r, shutdown
}
