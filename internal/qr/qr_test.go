package qr

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"image"
	"image/png"
	"strings"
	"testing"

	"github.com/cauri-pay/cauri/internal/qr/qrtest"
)

const link = "https://pay.example.com/pay/l/abcdefghijklmnop"

func TestPNG(t *testing.T) {
	b, err := PNG(link)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if got := img.Bounds().Size(); got != image.Pt(PNGSize, PNGSize) {
		t.Fatalf("size = %v; want %d a side", got, PNGSize)
	}
	if got := qrtest.Decode(t, img); got != link {
		t.Fatalf("decoded %q; want %q", got, link)
	}
}

// TestSVG: the SVG parses, and drawn module by module it decodes to the
// text.
func TestSVG(t *testing.T) {
	b, err := SVG(link)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		ViewBox string `xml:"viewBox,attr"`
		Paths   []struct {
			D string `xml:"d,attr"`
		} `xml:"path"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil || len(doc.Paths) != 1 {
		t.Fatalf("SVG = %v, %d paths\n%s", err, len(doc.Paths), b)
	}
	var n int
	if _, err := fmt.Sscanf(doc.ViewBox, "0 0 %d %d", &n, &n); err != nil || n < 21+8 {
		t.Fatalf("viewBox %q: %v", doc.ViewBox, err)
	}
	// Draw the path's rectangles ("Mx yhNv1h-Nz") 8 pixels a module.
	const scale = 8
	img := image.NewGray(image.Rect(0, 0, n*scale, n*scale))
	for i := range img.Pix {
		img.Pix[i] = 0xff
	}
	for _, cmd := range strings.Split(strings.TrimSuffix(doc.Paths[0].D, "z"), "z") {
		var x, y, w, w2 int
		if _, err := fmt.Sscanf(cmd, "M%d %dh%dv1h-%d", &x, &y, &w, &w2); err != nil || w != w2 {
			t.Fatalf("path command %q: %v", cmd, err)
		}
		for py := y * scale; py < (y+1)*scale; py++ {
			for px := x * scale; px < (x+w)*scale; px++ {
				img.Pix[py*img.Stride+px] = 0
			}
		}
	}
	if got := qrtest.Decode(t, img); got != link {
		t.Fatalf("decoded %q; want %q", got, link)
	}
}
