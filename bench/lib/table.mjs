// The rows a benchmark measured as a Markdown table (the keys of the first row as its columns),
// after a blank line, for the READMEs.
export function printMarkdownTable(rows) {
  console.log('');
  const cols = Object.keys(rows[0] ?? {});
  console.log(`| ${cols.join(' | ')} |`);
  console.log(`|${cols.map(() => '---').join('|')}|`);
  for (const r of rows) console.log(`| ${cols.map((c) => r[c]).join(' | ')} |`);
}
