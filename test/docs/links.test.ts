import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import MarkdownIt from 'markdown-it';
import GithubSlugger from 'github-slugger';

/**
 * Every relative link and anchor in the README, BENCHMARKS.md and docs/ resolves: the file exists, and an anchor names
 * a heading of the target (slugged as GitHub slugs them, duplicates numbered). markdown-it finds the links, so links
 * inside code blocks and inline code are not links, as on GitHub.
 */
const root = resolve(import.meta.dirname, '../..');
const markdown = new MarkdownIt({ html: true });

function markdownFiles(): string[] {
  const files = ['README.md', 'BENCHMARKS.md'].map((name) => join(root, name));
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.md')) files.push(path);
    }
  };
  walk(join(root, 'docs'));
  return files;
}

type Token = ReturnType<InstanceType<typeof MarkdownIt>['parse']>[number];

function* walkTokens(tokens: Token[]): Generator<Token> {
  for (const token of tokens) {
    yield token;
    if (token.children) yield* walkTokens(token.children);
  }
}

/** The anchors GitHub gives the headings of a markdown file. */
export function headingAnchors(source: string): Set<string> {
  const slugger = new GithubSlugger();
  const anchors = new Set<string>();
  const tokens = markdown.parse(source, {});
  tokens.forEach((token, index) => {
    if (token.type !== 'heading_open') return;
    const inline = tokens[index + 1];
    const text = [...walkTokens(inline?.children ?? [])]
      .filter((child) => child.type === 'text' || child.type === 'code_inline')
      .map((child) => child.content)
      .join('');
    anchors.add(slugger.slug(text));
  });
  return anchors;
}

/** Link targets of a markdown file: hrefs of links and srcs of images. */
export function linkTargets(source: string): string[] {
  const targets: string[] = [];
  for (const token of walkTokens(markdown.parse(source, {}))) {
    if (token.type === 'link_open') targets.push(String(token.attrGet('href') ?? ''));
    if (token.type === 'image') targets.push(String(token.attrGet('src') ?? ''));
  }
  return targets;
}

function isExternal(target: string): boolean {
  return /^[a-z][a-z0-9+.-]*:/i.test(target);
}

describe('documentation links', () => {
  const files = markdownFiles();

  it('finds the README and the docs', () => {
    expect(files.length).toBeGreaterThan(5);
  });

  for (const file of files) {
    it(`every relative link in ${relative(root, file)} resolves`, () => {
      const broken: string[] = [];
      for (const target of linkTargets(readFileSync(file, 'utf8'))) {
        if (!target || isExternal(target)) continue;
        const [pathPart, anchor] = target.split('#', 2) as [string, string | undefined];
        const targetFile = pathPart ? resolve(dirname(file), decodeURIComponent(pathPart)) : file;
        if (!existsSync(targetFile)) {
          broken.push(`${target}: no such file`);
          continue;
        }
        if (anchor === undefined) continue;
        if (!targetFile.endsWith('.md')) {
          broken.push(`${target}: an anchor into a file that is not markdown`);
          continue;
        }
        if (!headingAnchors(readFileSync(targetFile, 'utf8')).has(decodeURIComponent(anchor))) {
          broken.push(`${target}: no heading with anchor #${anchor} in ${relative(root, targetFile)}`);
        }
      }
      expect(broken).toEqual([]);
    });
  }
});

describe('the link checker itself', () => {
  it('slugs headings as GitHub does, numbering duplicates', () => {
    const anchors = headingAnchors('# Herald\n## The Inbox (browser clients)\n## Novu server SDKs: `@novu/node` and `@novu/api`\n## Herald\n');
    expect([...anchors]).toEqual(['herald', 'the-inbox-browser-clients', 'novu-server-sdks-novunode-and-novuapi', 'herald-1']);
  });

  it('ignores links inside code', () => {
    expect(linkTargets('```\n[a](nowhere.md)\n```\n`[b](nowhere.md)` [c](somewhere.md) ![d](pic.png)')).toEqual(['somewhere.md', 'pic.png']);
  });
});
