// The lab's images, made here in code when the module loads, each a few
// dozen bytes: a PNG (RFC 2083: signature, IHDR, one zlib IDAT, IEND, each
// chunk with its CRC-32), a baseline JPEG (ITU T.81: one 8x8 block of one
// grey, its DC coefficient the only one), a lossless WebP (RIFF, a VP8L
// chunk whose five prefix codes each hold a single symbol, so every pixel is
// that colour and costs no bits) and an SVG. /api/lab/image chooses one by
// Accept, as httpbin's does.

import zlib from "node:zlib";
import { parseAccept } from "../../http/message/media.js";
import { headerValue, type Request } from "../../http/message/request.js";
import type { Response } from "../../http/message/response.js";
import { fail } from "../../http/message/problem.js";

function pngChunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, "latin1");
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(Buffer.concat([head.subarray(4), data])) >>> 0, 0);
  return Buffer.concat([head, data, crc]);
}

/** 16 x 16, 8-bit RGB: a blue-to-orange gradient, each row a filter byte (0) and its pixels. */
function makePng(): Buffer {
  const size = 16;
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(size, 0);
  ihdr.writeUInt32BE(size, 4);
  ihdr.set([8, 2, 0, 0, 0], 8); // depth 8, colour type 2 (RGB), deflate, adaptive filtering, no interlace
  const rows = Buffer.alloc(size * (1 + size * 3));
  for (let y = 0; y < size; y++) {
    const row = y * (1 + size * 3);
    for (let x = 0; x < size; x++) rows.set([x * 16, 96, 255 - y * 16], row + 1 + x * 3);
  }
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), pngChunk("IHDR", ihdr), pngChunk("IDAT", zlib.deflateSync(rows)), pngChunk("IEND", Buffer.alloc(0))]);
}

/**
 * 8 x 8 greyscale baseline JPEG of one grey (64 of 255). Level-shifted, the
 * block is -64 everywhere, so its DC coefficient is 8 x -64 and every AC one
 * is 0; quantised by 8 it is -64, category 7, written as the category's
 * code and its seven bits (-65 in ones' complement: 0111111), then the end
 * of block. Each Huffman table holds one symbol with the one-bit code 0.
 */
function makeJpeg(): Buffer {
  const segment = (marker: number, body: number[]) => [0xff, marker, (body.length + 2) >> 8, (body.length + 2) & 0xff, ...body];
  const bits = (symbol: number) => [1, ...Array(15).fill(0), symbol]; // one code of length 1
  return Buffer.from([
    0xff, 0xd8, // SOI
    ...segment(0xe0, [0x4a, 0x46, 0x49, 0x46, 0x00, 1, 1, 0, 0, 1, 0, 1, 0, 0]), // APP0: JFIF 1.1, aspect 1:1, no thumbnail
    ...segment(0xdb, [0x00, ...Array(64).fill(8)]), // DQT: table 0, 8-bit, every step 8
    ...segment(0xc0, [8, 0, 8, 0, 8, 1, 1, 0x11, 0]), // SOF0: 8-bit, 8 x 8, one component (id 1, 1x1 sampling, table 0)
    ...segment(0xc4, [0x00, ...bits(7)]), // DHT: DC table 0, the one category 7
    ...segment(0xc4, [0x10, ...bits(0x00)]), // DHT: AC table 0, the one symbol end-of-block
    ...segment(0xda, [1, 1, 0x00, 0, 63, 0]), // SOS: one component, tables 0/0, spectral 0..63
    0b00111111, 0b01111111, // DC: code 0 then 0111111; AC: end of block 0; padded with ones
    0xff, 0xd9, // EOI
  ]);
}

/** Bits written least significant first, as VP8L reads them. */
class BitWriter {
  private readonly bytes: number[] = [];
  private bit = 0;
  write(value: number, count: number): void {
    for (let i = 0; i < count; i++) {
      if (this.bit === 0) this.bytes.push(0);
      if ((value >>> i) & 1) this.bytes[this.bytes.length - 1]! |= 1 << this.bit;
      this.bit = (this.bit + 1) & 7;
    }
  }
  get buffer(): Buffer {
    return Buffer.from(this.bytes);
  }
}

/** 16 x 16 lossless WebP of one opaque colour: each of the five prefix codes is a "simple" code of one symbol (zero bits per use). */
function makeWebp(): Buffer {
  const size = 16;
  const w = new BitWriter();
  w.write(0x2f, 8); // VP8L signature
  w.write(size - 1, 14);
  w.write(size - 1, 14);
  w.write(0, 1); // alpha is not used
  w.write(0, 3); // version 0
  w.write(0, 1); // no transform
  w.write(0, 1); // no colour cache
  w.write(0, 1); // no meta prefix codes
  const single = (symbol: number) => {
    w.write(1, 1); // simple code
    w.write(0, 1); // one symbol
    w.write(1, 1); // of 8 bits
    w.write(symbol, 8);
  };
  single(128); // green
  single(32); // red
  single(200); // blue
  single(255); // alpha
  single(0); // distance
  const payload = w.buffer;
  const padded = payload.length % 2 === 0 ? payload : Buffer.concat([payload, Buffer.alloc(1)]);
  const chunk = Buffer.alloc(8);
  chunk.write("VP8L", 0, "latin1");
  chunk.writeUInt32LE(payload.length, 4);
  const riff = Buffer.alloc(12);
  riff.write("RIFF", 0, "latin1");
  riff.writeUInt32LE(4 + 8 + padded.length, 4);
  riff.write("WEBP", 8, "latin1");
  return Buffer.concat([riff, chunk, padded]);
}

const SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="100" height="100" viewBox="0 0 100 100">
<title>startline lab</title>
<rect width="100" height="100" rx="12" fill="#0b5cad"/>
<path d="M20 70 L40 30 L60 55 L80 25" fill="none" stroke="#fff" stroke-width="8" stroke-linecap="round" stroke-linejoin="round"/>
</svg>
`;

export const IMAGES = {
  png: { type: "image/png", body: makePng() },
  jpeg: { type: "image/jpeg", body: makeJpeg() },
  webp: { type: "image/webp", body: makeWebp() },
  svg: { type: "image/svg+xml", body: Buffer.from(SVG, "utf8") },
} as const;

export type ImageKind = keyof typeof IMAGES;

export function imageAnswer(kind: ImageKind): Response {
  const image = IMAGES[kind];
  return { status: 200, headers: { "Content-Type": image.type }, body: image.body };
}

/** httpbin's order of preference: webp, svg, jpeg, then png (for image/png, image/* and, here, any type at all). */
const PREFERENCE: readonly [string, ImageKind][] = [
  ["image/webp", "webp"],
  ["image/svg+xml", "svg"],
  ["image/jpeg", "jpeg"],
  ["image/png", "png"],
  ["image/*", "png"],
  ["*/*", "png"],
];

export function imageByAccept(request: Request): Response {
  const accept = headerValue(request, "accept");
  if (accept === undefined) return imageAnswer("png");
  const ranges = parseAccept(accept).filter((r) => r.q > 0).map((r) => r.type);
  const found = PREFERENCE.find(([type]) => ranges.includes(type));
  if (found !== undefined) return imageAnswer(found[1]);
  fail(406, {
    kind: "not-acceptable",
    detail: `Accept ${accept.slice(0, 200)} names no image type this resource has: send image/webp, image/svg+xml, image/jpeg, image/png, image/* or */*.`,
    instance: request.target,
  });
}
