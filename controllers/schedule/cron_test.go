package schedule

import (
	"testing"
	"time"

	"k8s.io/utils/ptr"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

func TestParse(t *testing.T) {
	for _, ok := range []string{"*/5 * * * *", "0 3 * * *", "@daily", "30 2 * * mon-fri", "0 0 1 jan,jul *"} {
		if _, _, err := Parse(ok, nil); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "* * * *", "60 * * * *", "TZ=UTC 0 * * * *", "CRON_TZ=UTC 0 * * * *", "@every 1h", "@reboot"} {
		if _, _, err := Parse(bad, nil); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	if _, _, err := Parse("0 3 * * *", ptr.To("Mars/Olympus")); err == nil {
		t.Errorf("an unknown time zone parsed")
	}
}

func TestDue(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	daily, utc, _ := Parse("0 3 * * *", nil)
	berlin, loc, _ := Parse("0 3 * * *", ptr.To("Europe/Berlin"))
	minutely, _, _ := Parse("* * * * *", nil)
	for _, tc := range []struct {
		name      string
		last, now string
		berlin    bool
		every     bool
		due       string
		missed    int
	}{
		{name: "not yet", last: "2026-11-24T03:00:00Z", now: "2026-11-25T02:59:59Z"},
		{name: "due on the second", last: "2026-11-24T03:00:00Z", now: "2026-11-25T03:00:00Z", due: "2026-11-25T03:00:00Z"},
		{name: "due a while ago", last: "2026-11-24T03:00:00Z", now: "2026-11-25T09:00:00Z", due: "2026-11-25T03:00:00Z"},
		{name: "three days down: the latest only", last: "2026-11-21T03:00:00Z", now: "2026-11-24T04:00:00Z", due: "2026-11-24T03:00:00Z", missed: 2},
		{name: "in Berlin 03:00 is 02:00 UTC in winter", last: "2026-11-24T02:00:00Z", now: "2026-11-25T02:30:00Z", berlin: true, due: "2026-11-25T02:00:00Z"},
		{name: "a minutely schedule a month unattended", last: "2026-10-24T00:00:00Z", now: "2026-11-24T00:00:30Z", every: true, due: "2026-11-24T00:00:00Z", missed: maxSteps + 2879},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, l := daily, utc
			if tc.berlin {
				s, l = berlin, loc
			}
			if tc.every {
				s = minutely
			}
			due, missed := Due(s, l, at(tc.last), at(tc.now))
			want := time.Time{}
			if tc.due != "" {
				want = at(tc.due)
			}
			if !due.Equal(want) || missed != tc.missed {
				t.Errorf("Due = %v, %d missed; want %v, %d", due, missed, want, tc.missed)
			}
		})
	}
}

func TestChildName(t *testing.T) {
	at := time.Date(2026, 11, 24, 3, 0, 0, 0, time.UTC)
	if got := api.ChildName("nightly", api.CauseSchedule, at, ""); got != "nightly-29924820" {
		t.Errorf("scheduled: %s", got)
	}
	a, b := api.ChildName("nightly", api.CauseTrigger, at, "x"), api.ChildName("nightly", api.CauseTrigger, at, "y")
	if a == b || len(a) != len("nightly")+10 || a != api.ChildName("nightly", api.CauseTrigger, time.Time{}, "x") {
		t.Errorf("triggered: %s %s", a, b)
	}
}
