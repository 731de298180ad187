package schedule

import (
	"fmt"
	"strings"
	"time"
	_ "time/tzdata" // time zones for timeZone, also in an image without /usr/share/zoneinfo

	"github.com/robfig/cron/v3"
)

// Parse reads a schedule's cron text and time zone (UTC when unset) with robfig/cron's standard
// parser, the one Kubernetes' CronJob controller uses.
func Parse(schedule string, timeZone *string) (cron.Schedule, *time.Location, error) {
	loc := time.UTC
	if timeZone != nil && *timeZone != "" {
		l, err := time.LoadLocation(*timeZone)
		if err != nil {
			return nil, nil, fmt.Errorf("timeZone %q: %w", *timeZone, err)
		}
		loc = l
	}
	if t := strings.TrimSpace(schedule); strings.HasPrefix(t, "TZ=") || strings.HasPrefix(t, "CRON_TZ=") {
		return nil, nil, fmt.Errorf("schedule %q: give the time zone in timeZone", schedule)
	}
	if strings.HasPrefix(strings.TrimSpace(schedule), "@every") {
		return nil, nil, fmt.Errorf("schedule %q: @every is not supported; give a cron schedule", schedule)
	}
	s, err := cron.ParseStandard(schedule)
	if err != nil {
		return nil, nil, fmt.Errorf("schedule %q: %w", schedule, err)
	}
	return s, loc, nil
}

// maxSteps bounds the walk over schedule times since the last run; a dense schedule long unattended
// walks again from 48 hours ago, which holds its most recent time.
const maxSteps = 5000

// Due is the schedule's most recent time after last and at or before now (zero when none), and
// how many earlier times since last it passed over (at least) : those are never run, so an operator that was
// down or a schedule that was suspended does not start a burst of catch-up runs.
func Due(s cron.Schedule, loc *time.Location, last, now time.Time) (due time.Time, missed int) {
	start := last
	for attempt := 0; attempt < 2; attempt++ {
		t, n := start, 0
		for ; n < maxSteps; n++ {
			next := s.Next(t.In(loc))
			if next.IsZero() || next.After(now) {
				break
			}
			t = next
		}
		if n < maxSteps {
			if n == 0 {
				return time.Time{}, 0
			}
			return t, attempt*maxSteps + n - 1 // after a second walk: at least that many
		}
		start = now.Add(-48 * time.Hour)
	}
	return time.Time{}, 0
}

// Next is the schedule's first time after t.
func Next(s cron.Schedule, loc *time.Location, t time.Time) time.Time { return s.Next(t.In(loc)) }
