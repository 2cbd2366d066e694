// Package qrtest reads QR codes back for the tests, with a decoder of its
// own (ZXing's Go port), not the encoder's. Only tests import it.
package qrtest

import (
	"image"
	"testing"

	"github.com/makiuchi-d/gozxing"
	zxqr "github.com/makiuchi-d/gozxing/qrcode"
)

// Decode reads the text of the QR code img holds. The codes are drawn,
// not photographed: they are read as pure barcodes (square, unrotated,
// modules on a grid), which is what the page and the PNG give. ZXing's
// finder-pattern detector, meant for photographs, misplaced the grid of
// about 1 code in 80 of these (a Reed-Solomon failure on a correct code:
// 5 of 400 random link addresses; 0 of 400 read as pure barcodes).
func Decode(t testing.TB, img image.Image) string {
	t.Helper()
	bmp, err := gozxing.NewBinaryBitmapFromImage(img)
	if err != nil {
		t.Fatal(err)
	}
	res, err := zxqr.NewQRCodeReader().Decode(bmp, map[gozxing.DecodeHintType]interface{}{gozxing.DecodeHintType_PURE_BARCODE: true})
	if err != nil {
		t.Fatalf("decode the QR code: %v", err)
	}
	return res.GetText()
}
