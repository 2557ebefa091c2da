import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { Writable, type Readable } from 'node:stream';

/**
 * The small part of the tar format (POSIX ustar) a backup archive needs: regular files with short names. Written by
 * hand so that `tar xzf` opens a backup and no dependency is needed. Sizes past the 11 octal digits' 8 GiB use the
 * GNU base-256 form, which GNU tar and bsdtar read.
 */
const BLOCK = 512;

export interface TarEntry {
  name: string;
  mode: number;
  /** A file to stream, or the content itself. */
  source: { path: string } | { content: Buffer };
}

function header(name: string, mode: number, size: number, mtime: number): Buffer {
  if (Buffer.byteLength(name) > 99) throw new Error(`tar entry name too long: ${name}`);
  const block = Buffer.alloc(BLOCK);
  block.write(name, 0, 100, 'utf8');
  block.write(octal(mode, 7), 100);
  block.write(octal(0, 7), 108);
  block.write(octal(0, 7), 116);
  if (size < 8 ** 11) block.write(octal(size, 11), 124);
  else {
    block[124] = 0x80;
    let rest = BigInt(size);
    for (let index = 135; index > 124; index--) {
      block[index] = Number(rest & 0xffn);
      rest >>= 8n;
    }
  }
  block.write(octal(Math.floor(mtime / 1000), 11), 136);
  block.fill(' ', 148, 156);
  block.write('0', 156);
  block.write('ustar\u000000', 257, 'binary');
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(sum.toString(8).padStart(6, '0') + '\u0000 ', 148, 'binary');
  return block;
}

function octal(value: number, digits: number): string {
  return value.toString(8).padStart(digits, '0') + '\u0000';
}

/** The archive as a stream of chunks: each entry's header, content and padding, then the two zero blocks. */
export async function* tarStream(entries: TarEntry[]): AsyncGenerator<Buffer> {
  for (const entry of entries) {
    const size = 'path' in entry.source ? (await stat(entry.source.path)).size : entry.source.content.length;
    yield header(entry.name, entry.mode, size, Date.now());
    let written = 0;
    if ('path' in entry.source) {
      for await (const chunk of createReadStream(entry.source.path)) {
        written += (chunk as Buffer).length;
        yield chunk as Buffer;
      }
    } else {
      written = size;
      yield entry.source.content;
    }
    if (written !== size) throw new Error(`${entry.name} changed while it was archived`);
    if (size % BLOCK) yield Buffer.alloc(BLOCK - (size % BLOCK));
  }
  yield Buffer.alloc(BLOCK * 2);
}

/**
 * Reads an archive, handing each regular file's content to `open(name)` (a writable, or undefined to refuse the
 * name, which fails the read). Only what tarStream writes is understood.
 */
export async function readTar(input: Readable, open: (name: string, size: number) => Writable): Promise<string[]> {
  const names: string[] = [];
  let pending: Buffer = Buffer.alloc(0);
  let current: { out: Writable; remaining: number; padding: number } | undefined;
  let ended = false;
  const finish = (out: Writable) => new Promise<void>((resolve, reject) => out.end((error?: Error | null) => (error ? reject(error) : resolve())));
  const write = (out: Writable, chunk: Buffer) =>
    new Promise<void>((resolve, reject) => out.write(chunk, (error) => (error ? reject(error) : resolve())));

  for await (const chunk of input) {
    pending = pending.length ? Buffer.concat([pending, chunk as Buffer]) : (chunk as Buffer);
    for (;;) {
      if (ended) break;
      if (current) {
        if (current.remaining > 0) {
          if (pending.length === 0) break;
          const take = Math.min(current.remaining, pending.length);
          await write(current.out, pending.subarray(0, take));
          pending = pending.subarray(take);
          current.remaining -= take;
          continue;
        }
        if (pending.length < current.padding) break;
        pending = pending.subarray(current.padding);
        await finish(current.out);
        current = undefined;
        continue;
      }
      if (pending.length < BLOCK) break;
      const block = pending.subarray(0, BLOCK);
      pending = pending.subarray(BLOCK);
      if (block.every((byte) => byte === 0)) {
        ended = true;
        break;
      }
      const name = block.subarray(0, 100).toString('utf8').replace(/\0.*$/s, '');
      const type = String.fromCharCode(block[156] || 0x30);
      if (type !== '0') throw new Error(`unexpected tar entry ${name} (type ${type})`);
      const size = readSize(block.subarray(124, 136));
      names.push(name);
      current = { out: open(name, size), remaining: size, padding: size % BLOCK ? BLOCK - (size % BLOCK) : 0 };
    }
  }
  if (current || !ended) throw new Error('the archive is truncated');
  return names;
}

function readSize(field: Buffer): number {
  if (field[0] & 0x80) {
    let value = 0n;
    for (let index = 1; index < field.length; index++) value = (value << 8n) | BigInt(field[index]);
    return Number(value);
  }
  return parseInt(field.toString('ascii').replace(/\0.*$/s, '').trim() || '0', 8);
}
