package httpx

import (
	"strconv"
	"strings"
	"time"
)

// DateTime writes a moment as a page's language writes a date and time
// (t: the page's texts, from Language): "26 Nov 2026, 14:05 UTC",
// "26 nov. 2026 à 14:05 UTC". The service knows no merchant's time zone:
// the time is UTC and says so.
func DateTime(t map[string]string, at time.Time) string {
	at = at.UTC()
	months := strings.Fields(t["months"])
	month := at.Format("Jan")
	if len(months) == 12 {
		month = months[at.Month()-1]
	}
	return strings.NewReplacer("{day}", strconv.Itoa(at.Day()), "{month}", month, "{year}", strconv.Itoa(at.Year()),
		"{time}", at.Format("15:04")).Replace(t["datetime"])
}
