import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

/** SQLite's WAL layout (https://www.sqlite.org/fileformat2.html#walformat): a 32-byte header, then frames. */
const WAL_HEADER_BYTES = 32;
const FRAME_HEADER_BYTES = 24;

export interface WalFrameCount {
  frames: number;
  /** Frames that end a transaction (their header holds the database size after the commit). */
  commits: number;
  /** Frames per table or index, by the name `dbstat` gives the page's owner; `(new)` for pages it does not know. */
  byOwner: Map<string, number>;
}

/**
 * Counts the frames of a WAL file and which table or index each frame's page belongs to. Every frame is one page
 * written at a commit, so this says where a workload's write cost goes (`npm run bench -- --wal-pages`).
 */
export function countWalFrames(walPath: string, ownerOfPage: (page: number) => string | undefined): WalFrameCount {
  const fd = openSync(walPath, 'r');
  try {
    const size = fstatSync(fd).size;
    const count: WalFrameCount = { frames: 0, commits: 0, byOwner: new Map() };
    if (size < WAL_HEADER_BYTES) return count;
    const header = Buffer.alloc(WAL_HEADER_BYTES);
    readSync(fd, header, 0, WAL_HEADER_BYTES, 0);
    const pageSize = header.readUInt32BE(8);
    const salt = [header.readUInt32BE(16), header.readUInt32BE(20)];
    const frameHeader = Buffer.alloc(FRAME_HEADER_BYTES);
    for (let offset = WAL_HEADER_BYTES; offset + FRAME_HEADER_BYTES + pageSize <= size; offset += FRAME_HEADER_BYTES + pageSize) {
      readSync(fd, frameHeader, 0, FRAME_HEADER_BYTES, offset);
      // Frames left from before the WAL was last restarted carry the old salt: they are not part of this log.
      if (frameHeader.readUInt32BE(8) !== salt[0] || frameHeader.readUInt32BE(12) !== salt[1]) break;
      const page = frameHeader.readUInt32BE(0);
      count.frames++;
      if (frameHeader.readUInt32BE(4) !== 0) count.commits++;
      const owner = ownerOfPage(page) ?? '(new)';
      count.byOwner.set(owner, (count.byOwner.get(owner) ?? 0) + 1);
    }
    return count;
  } finally {
    closeSync(fd);
  }
}
