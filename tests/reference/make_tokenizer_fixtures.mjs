// Writes tests/data/tokenizers/*/tokenizer.json (small BPE tokenizers in Hugging Face's schema, merges learned here
// from tokenizer_corpus.txt) and each one's fixtures.json: ids, tokens and decodes of hard strings made by Hugging
// Face's own tokenizers library (the Rust implementation, through its npm package `tokenizers`), which tst_tokenizer
// compares core/hf/tokenizer against.
//
// Run (the npm package installed anywhere outside the repository):
//   mkdir -p /tmp/npm-tok && (cd /tmp/npm-tok && npm install tokenizers@0.23.2)
//   node tests/reference/make_tokenizer_fixtures.mjs /tmp/npm-tok
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const packageDir = process.argv[2];
if (!packageDir) {
    console.error('usage: node make_tokenizer_fixtures.mjs NPM_DIR   (NPM_DIR holds node_modules/tokenizers)');
    process.exit(2);
}
const require = createRequire(path.join(path.resolve(packageDir), 'package.json'));
const hf = require('tokenizers');
const hfVersion = require('tokenizers/package.json').version;

const here = path.dirname(fileURLToPath(import.meta.url));
const outRoot = path.join(here, '..', 'data', 'tokenizers');
const corpus = fs.readFileSync(path.join(here, 'tokenizer_corpus.txt'), 'utf8');

// ---- byte-level BPE (GPT-2's alphabet and order) ----

// GPT-2's bytes_to_unicode: printable bytes map to themselves, the others to U+0100 upwards, in this order.
function bytesToUnicode() {
    const bs = [];
    for (let b = 0x21; b <= 0x7e; ++b) bs.push(b);
    for (let b = 0xa1; b <= 0xac; ++b) bs.push(b);
    for (let b = 0xae; b <= 0xff; ++b) bs.push(b);
    const cs = [...bs];
    let n = 0;
    for (let b = 0; b < 256; ++b)
        if (!bs.includes(b)) {
            bs.push(b);
            cs.push(256 + n++);
        }
    return bs.map((b, i) => [b, String.fromCodePoint(cs[i])]);
}

// Learns `count` merges over word counts: the most frequent adjacent pair first, ties broken by the pair's text, so
// the result is the same on every run. `mergeable(symbol)` keeps symbols outside the vocabulary out of merges.
function learnMerges(wordCounts, count, mergeable) {
    const words = [...wordCounts].map(([w, c]) => ({ symbols: [...w], count: c }));
    const merges = [];
    for (let m = 0; m < count; ++m) {
        const pairs = new Map();
        for (const w of words)
            for (let i = 0; i + 1 < w.symbols.length; ++i) {
                const a = w.symbols[i], b = w.symbols[i + 1];
                if (!mergeable(a) || !mergeable(b)) continue;
                const key = a + '\u0000' + b;
                pairs.set(key, (pairs.get(key) || 0) + w.count);
            }
        let best = null, bestCount = 0;
        for (const [key, c] of pairs)
            if (c > bestCount || (c === bestCount && key < best)) [best, bestCount] = [key, c];
        if (best === null || bestCount < 2) break;
        const [a, b] = best.split('\u0000');
        merges.push([a, b]);
        for (const w of words) {
            const out = [];
            for (let i = 0; i < w.symbols.length; ++i)
                if (i + 1 < w.symbols.length && w.symbols[i] === a && w.symbols[i + 1] === b) {
                    out.push(a + b);
                    ++i;
                } else out.push(w.symbols[i]);
            w.symbols = out;
        }
    }
    return merges;
}

function countWords(pieces) {
    const counts = new Map();
    for (const p of pieces) counts.set(p, (counts.get(p) || 0) + 1);
    return counts;
}

function addedToken(id, content, special, normalized) {
    return { id, content, single_word: false, lstrip: false, rstrip: false, normalized, special };
}

function vocabWithMerges(alphabet, merges) {
    const vocab = {};
    let next = 0;
    for (const s of alphabet) if (!(s in vocab)) vocab[s] = next++;
    for (const [a, b] of merges) if (!(a + b in vocab)) vocab[a + b] = next++;
    return vocab;
}

const byteLevelPre = hf.byteLevelPreTokenizer(false, true);
const byteWords = countWords(byteLevelPre.preTokenizeString(corpus).map(([piece]) => piece));
const byteMerges = learnMerges(byteWords, 400, () => true);
const byteVocab = vocabWithMerges(
    bytesToUnicode().map(([, c]) => c),
    byteMerges,
);
const byteVocabSize = Object.keys(byteVocab).length;

function byteLevelModel(mergeForm, ignoreMerges) {
    const model = {
        type: 'BPE',
        dropout: null,
        unk_token: null,
        continuing_subword_prefix: mergeForm === 'string' ? '' : null,
        end_of_word_suffix: mergeForm === 'string' ? '' : null,
        fuse_unk: false,
        byte_fallback: false,
        vocab: byteVocab,
        merges: byteMerges.map(([a, b]) => (mergeForm === 'string' ? a + ' ' + b : [a, b])),
    };
    if (ignoreMerges) model.ignore_merges = true;
    return model;
}

const byteLevelStep = (addPrefixSpace, useRegex) => ({
    type: 'ByteLevel',
    add_prefix_space: addPrefixSpace,
    trim_offsets: true,
    use_regex: useRegex,
});

// GPT-2: ByteLevel with its own regex, "a b" merges, <|endoftext|>, and one normal (not special) added token.
const gpt2 = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [
        addedToken(byteVocabSize, '<|endoftext|>', true, true),
        addedToken(byteVocabSize + 1, ' PositionLab', false, true),
    ],
    normalizer: null,
    pre_tokenizer: byteLevelStep(false, true),
    post_processor: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true },
    decoder: byteLevelStep(true, true),
    model: byteLevelModel('string', false),
};

const llama3Regex =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const qwen2Regex =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

function templateWithBos(bos, bosId) {
    return {
        type: 'TemplateProcessing',
        single: [{ SpecialToken: { id: bos, type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
        pair: [
            { SpecialToken: { id: bos, type_id: 0 } },
            { Sequence: { id: 'A', type_id: 0 } },
            { SpecialToken: { id: bos, type_id: 1 } },
            { Sequence: { id: 'B', type_id: 1 } },
        ],
        special_tokens: { [bos]: { id: bos, ids: [bosId], tokens: [bos] } },
    };
}

// Llama 3: Split by its regex, then ByteLevel without a regex; ["a", "b"] merges; ignore_merges; a BOS template.
const llama3 = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [
        addedToken(byteVocabSize, '<|begin_of_text|>', true, false),
        addedToken(byteVocabSize + 1, '<|end_of_text|>', true, false),
        addedToken(byteVocabSize + 2, '<|eot_id|>', true, false),
    ],
    normalizer: null,
    pre_tokenizer: {
        type: 'Sequence',
        pretokenizers: [
            { type: 'Split', pattern: { Regex: llama3Regex }, behavior: 'Isolated', invert: false },
            byteLevelStep(false, false),
        ],
    },
    post_processor: {
        type: 'Sequence',
        processors: [
            { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true },
            templateWithBos('<|begin_of_text|>', byteVocabSize),
        ],
    },
    decoder: byteLevelStep(true, true),
    model: byteLevelModel('pair', true),
};

// Qwen2: NFC, Split by its regex (single digits), ByteLevel without a regex; <|im_start|> and <|im_end|>.
const qwen2 = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [
        addedToken(byteVocabSize, '<|endoftext|>', true, false),
        addedToken(byteVocabSize + 1, '<|im_start|>', true, false),
        addedToken(byteVocabSize + 2, '<|im_end|>', true, false),
    ],
    normalizer: { type: 'NFC' },
    pre_tokenizer: {
        type: 'Sequence',
        pretokenizers: [
            { type: 'Split', pattern: { Regex: qwen2Regex }, behavior: 'Isolated', invert: false },
            byteLevelStep(false, false),
        ],
    },
    post_processor: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false },
    decoder: byteLevelStep(false, false),
    model: byteLevelModel('pair', false),
};

// SmolLM: single digits (Digits), then GPT-2's ByteLevel with its regex; plus added tokens that strip the spaces
// around them (<mask>, as RoBERTa's) or match whole words only ([sw]).
const smollm = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [
        addedToken(byteVocabSize, '<|endoftext|>', true, false),
        { ...addedToken(byteVocabSize + 1, '<mask>', true, false), lstrip: true, rstrip: true },
        { ...addedToken(byteVocabSize + 2, '[sw]', false, true), single_word: true },
    ],
    normalizer: null,
    pre_tokenizer: {
        type: 'Sequence',
        pretokenizers: [{ type: 'Digits', individual_digits: true }, byteLevelStep(false, true)],
    },
    post_processor: null,
    decoder: byteLevelStep(true, true),
    model: byteLevelModel('string', false),
};

// BLOOM: Split by a pattern with a nested character class (Oniguruma's syntax), then ByteLevel without a regex.
const bloom = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [addedToken(byteVocabSize, '<unk>', true, false), addedToken(byteVocabSize + 1, '</s>', true, false)],
    normalizer: null,
    pre_tokenizer: {
        type: 'Sequence',
        pretokenizers: [
            {
                type: 'Split',
                pattern: { Regex: ' ?[^(\\s|[.,!?…。，、।۔،])]+' },
                behavior: 'Isolated',
                invert: false,
            },
            byteLevelStep(false, false),
        ],
    },
    post_processor: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: false },
    decoder: byteLevelStep(false, false),
    model: byteLevelModel('string', false),
};

// ---- Metaspace BPE with byte fallback (Llama 2, Mistral) ----

const space = '\u2581';
const metaText = corpus.split('\n').map((line) => space + line.replaceAll(' ', space));
const metaWords = countWords(metaText.flatMap((line) => line.split(new RegExp(`(?=${space})`)).filter((w) => w)));
// Characters seen at least three times join the vocabulary; the rest (and \n, \t) fall back to <0xNN> bytes.
const charCounts = new Map();
for (const [w, c] of metaWords) for (const ch of w) charCounts.set(ch, (charCounts.get(ch) || 0) + c);
const metaChars = [...charCounts]
    .filter(([ch, c]) => c >= 3 && ch !== '\t' && ch !== '\n')
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .map(([ch]) => ch);
const metaCharSet = new Set(metaChars);
const metaMerges = learnMerges(metaWords, 300, (s) => s.length > 1 || metaCharSet.has(s));
const byteTokens = [...Array(256).keys()].map((b) => `<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`);
const metaVocab = vocabWithMerges(['<unk>', '<s>', '</s>', ...byteTokens, ...metaChars], metaMerges);

function metaspaceModel() {
    return {
        type: 'BPE',
        dropout: null,
        unk_token: '<unk>',
        continuing_subword_prefix: null,
        end_of_word_suffix: null,
        fuse_unk: true,
        byte_fallback: true,
        ignore_merges: false,
        vocab: metaVocab,
        merges: metaMerges.map(([a, b]) => [a, b]),
    };
}

const metaAddedTokens = [
    addedToken(0, '<unk>', true, false),
    addedToken(1, '<s>', true, false),
    addedToken(2, '</s>', true, false),
];

const llamaDecoder = {
    type: 'Sequence',
    decoders: [
        { type: 'Replace', pattern: { String: space }, content: ' ' },
        { type: 'ByteFallback' },
        { type: 'Fuse' },
        { type: 'Strip', content: ' ', start: 1, stop: 0 },
    ],
};

// Llama 2 (the converter's legacy form): Prepend and Replace normalizers, no pre-tokenizer, and the
// Replace/ByteFallback/Fuse/Strip decoder.
const llama2 = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: metaAddedTokens,
    normalizer: {
        type: 'Sequence',
        normalizers: [
            { type: 'Prepend', prepend: space },
            { type: 'Replace', pattern: { String: ' ' }, content: space },
        ],
    },
    pre_tokenizer: null,
    post_processor: templateWithBos('<s>', 1),
    decoder: llamaDecoder,
    model: metaspaceModel(),
};

// Mistral (newer converters): the Metaspace pre-tokenizer, prepend_scheme "first", no split; Llama 2's decoder. A text
// that starts with a space loses it on the way back (decode strips the one space that "first" did not add), as in HF.
const metaspaceStep = { type: 'Metaspace', replacement: space, prepend_scheme: 'first', split: false };
const mistral = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: metaAddedTokens,
    normalizer: null,
    pre_tokenizer: metaspaceStep,
    post_processor: templateWithBos('<s>', 1),
    decoder: llamaDecoder,
    model: metaspaceModel(),
};

// ---- the hard strings ----

const hardStrings = [
    '',
    ' ',
    '   ',
    'Hello world',
    '  two leading, three trailing   ',
    'tabs\tand\t\ttabs',
    'line one\nline two\n\n\nline five\r\nwindows',
    ' \n \t\n',
    "It's theirs; they're sure we've seen what you'll do, I'm told he'd won't.",
    "IT'S LOUD AND THEY'RE 'QUOTED'",
    '1234567890 and 3.14159 and 1,000,000 and 2026-11-26',
    '99999999999999999999999999999999',
    'café naïve résumé Ångström',
    'cafe\u0301 nai\u0308ve re\u0301sume\u0301',
    '位置编码与长度外推：注意力的位置。',
    'こんにちは世界、日本語のテキスト',
    '한국어 문장도 있습니다',
    'emoji 🙂👍🏽🚀 end',
    'family 👩\u200d👩\u200d👧\u200d👦 and flag 🇫🇷',
    '𝔘𝔫𝔦𝔠𝔬𝔡𝔢 math x² + y² = z² ∑∫√',
    '\u00a0non\u00a0breaking\u2003em space',
    'code: if (x != 0) { return y->z[i] + 0x1F; }',
    'Hello<|endoftext|>world',
    'a <|endoftext|> b<|endoftext|><|endoftext|>',
    '<|endoftext|',
    'at PositionLab, PositionLabs',
    '<|im_start|>user\nHi<|im_end|>',
    '<|begin_of_text|>Hi<|eot_id|>',
    '<s>Hello</s> <s> world',
    'middle <unk> token',
    'attention sinks and position extrapolation',
    'a <mask> b  <mask>\t<mask>c',
    '[sw] a[sw]b [sw], x_[sw] 1[sw]',
];

// Random strings from a seeded generator (mulberry32): ASCII with spaces, tabs and newlines, Latin-1, combining
// marks, CJK, kana, Hangul, emoji with skin tones and ZWJ, astral letters, and pieces of special tokens.
function mulberry32(seed) {
    return () => {
        seed = (seed + 0x6d2b79f5) | 0;
        let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
        t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
}
const random = mulberry32(19);
const ranges = [
    [0x20, 0x7e], [0x20, 0x20], [0x09, 0x0a], [0x30, 0x39], [0x27, 0x27], [0xa0, 0xff], [0x300, 0x36f],
    [0x4e00, 0x4fff], [0x3040, 0x30ff], [0xac00, 0xad00], [0x1f300, 0x1f64f], [0x1f3fb, 0x1f3ff], [0x200d, 0x200d],
    [0x1d400, 0x1d4ff],
];
const pieces = ['<|endoftext|>', '<s>', '</s>', '<mask>', '[sw]', "'s", "'RE", '  ', '\r\n', '<|im_', '▁'];
for (let i = 0; i < 40; ++i) {
    let text = '';
    const length = Math.floor(random() * 60);
    for (let k = 0; k < length; ++k) {
        if (random() < 0.08) {
            text += pieces[Math.floor(random() * pieces.length)];
            continue;
        }
        const [lo, hi] = ranges[Math.floor(random() * ranges.length)];
        text += String.fromCodePoint(lo + Math.floor(random() * (hi - lo + 1)));
    }
    hardStrings.push(text);
}
// And the start of the training text, once: many merges at work.
hardStrings.push(corpus.slice(0, 1500));

function writeJson(file, value) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, JSON.stringify(value, null, 1) + '\n');
}

const tokenizers = { gpt2, llama3, qwen2, smollm, bloom, llama2, mistral };
for (const [name, json] of Object.entries(tokenizers)) {
    const folder = path.join(outRoot, name);
    writeJson(path.join(folder, 'tokenizer.json'), json);
    const tok = hf.Tokenizer.fromFile(path.join(folder, 'tokenizer.json'));
    const rows = [];
    for (const text of hardStrings) {
        const plain = await tok.encode(text, null, { addSpecialTokens: false });
        const withSpecial = await tok.encode(text, null, { addSpecialTokens: true });
        rows.push({
            text,
            ids: plain.getIds(),
            tokens: plain.getTokens(),
            ids_with_special: withSpecial.getIds(),
            decoded: await tok.decode(plain.getIds(), false),
            decoded_skipping_special: await tok.decode(withSpecial.getIds(), true),
        });
    }
    // One row a line: small files and readable diffs.
    const header = {
        made_by: `tokenizers ${hfVersion} (npm, Hugging Face's Rust implementation)`,
        vocab_size: tok.getVocabSize(true),
    };
    fs.writeFileSync(
        path.join(folder, 'fixtures.json'),
        JSON.stringify(header).slice(0, -1) + ',"rows":[\n' + rows.map((r) => JSON.stringify(r)).join(',\n') + '\n]}\n',
    );
    console.log(`${name}: vocab ${tok.getVocabSize(true)}, ${rows.length} rows`);
}
