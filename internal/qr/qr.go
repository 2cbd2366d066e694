// Package qr draws QR codes of short texts (a payment link's address) as
// SVG and PNG. It wraps github.com/skip2/go-qrcode, a pure-Go encoder, so
// that no other package knows which library draws them.
//
// It imports the standard library and that encoder only.
package qr

import (
	"bytes"
	"fmt"

	qrcode "github.com/skip2/go-qrcode"
)

// PNGSize is the side of a PNG code, in pixels: sharp when printed a few
// centimetres wide, small enough to send in a message.
const PNGSize = 512

// level is the error correction: Medium (15% of the code may be lost),
// enough for a screen or a printed sticker.
const level = qrcode.Medium

// PNG is the code of text as a PNG image of PNGSize pixels a side, its
// quiet zone (4 modules) included.
func PNG(text string) ([]byte, error) {
	q, err := qrcode.New(text, level)
	if err != nil {
		return nil, fmt.Errorf("qr: %w", err)
	}
	return q.PNG(PNGSize)
}

// SVG is the code of text as an SVG image, one unit a module, its quiet
// zone included: it scales to any size without blurring.
func SVG(text string) ([]byte, error) {
	q, err := qrcode.New(text, level)
	if err != nil {
		return nil, fmt.Errorf("qr: %w", err)
	}
	bits := q.Bitmap()
	n := len(bits)
	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" shape-rendering="crispEdges">`, n, n)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#fff"/><path fill="#000" d="`, n, n)
	for y, row := range bits {
		for x := 0; x < n; x++ {
			if !row[x] {
				continue
			}
			run := 1 // dark modules side by side make one rectangle
			for x+run < n && row[x+run] {
				run++
			}
			fmt.Fprintf(&b, "M%d %dh%dv1h-%dz", x, y, run, run)
			x += run - 1
		}
	}
	b.WriteString(`"/></svg>`)
	return b.Bytes(), nil
}
