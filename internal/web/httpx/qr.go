package httpx

import (
	"net/http"

	"github.com/cauri-pay/cauri/internal/qr"
)

// WriteQR answers the QR code of address as an image: PNG when format is
// "png", SVG otherwise; name is the file's name a browser saves it under.
func WriteQR(w http.ResponseWriter, address, format, name string) error {
	draw, ct := qr.SVG, "image/svg+xml"
	if format == "png" {
		draw, ct = qr.PNG, "image/png"
	} else {
		format = "svg"
	}
	img, err := draw(address)
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", ct)
	h.Set("Content-Disposition", `inline; filename="`+name+`.`+format+`"`)
	h.Set("Cache-Control", "private, max-age=3600") // a link's address never changes
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	w.Write(img)
	return nil
}
