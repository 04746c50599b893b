<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>FigureText</name>
    <message>
        <source>%1: x = %2, y = %3</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>out of memory</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>head %1 of %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>bidirectional</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>causal</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>logn (L = %1)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>T5 bucket of n − m</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>probe score (q = k = 1)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>bias b(m, n)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 × logn scale</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: bucket map</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: probe score</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: dot(p_m, p_n) − d/2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: attention bias</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>head %1 of %2 · N = %3 · %4</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Compare: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source> vs </source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Difference %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>head %1 · N = %2 · masked where either is masked</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sinusoidal position embeddings: dot(p_m, p_n) − d/2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>distance |m − n|</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>d = %1, base = %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Attention entropy vs length (head %1, %2, q·k %3)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>last query</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>mean over queries</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>random</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>from the model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>sequence length n</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>entropy (nats)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>log n (uniform)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>key position n</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>query position m</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>masked</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 (%2, step %3)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Attention on text: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>key (byte n)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>query (byte m)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>layer %1 · head %2 of %3 · N = %4 bytes · training context %5</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>attention probability</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Entropy of each query&apos;s attention (head %1)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>nats</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>row entropy</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>log(m + 1) (uniform)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>training context L = %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 (trained here, %2 steps)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Training loss (context L = %1)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>step</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>loss (nats per byte)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Perplexity vs length (L = %1)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>evaluation length (bytes)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>perplexity (per byte)</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>QPlatformTheme</name>
    <message>
        <source>OK</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Save</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Close</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Yes</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;No</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Apply</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Discard</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Help</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>SchemeText</name>
    <message>
        <source>NoPE (no positional encoding)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>b(m, n) = 0   (causal mask only)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No position information at all. A causal decoder can still infer position from how many tokens it sees, which is why NoPE extrapolates better than one might expect.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sinusoidal (absolute)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>p[m,2i] = sin(m w_i), p[m,2i+1] = cos(m w_i), w_i = base^(-2i/d); view: dot(p_m, p_n) - d/2 = sum_{i&lt;d/2} cos((m-n) w_i) - d/2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The original Transformer&apos;s absolute encoding, added to the token embedding. The dot product of two position vectors depends only on their distance and oscillates as it decays; past the training length the model meets position vectors it has never seen.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Learned absolute</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>x_m = e(token_m) + P[m],  P a trained table of `context` rows</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A trained table of position vectors (GPT-2, BERT). It has no row for positions past the training context, so it cannot extrapolate at all: such positions are reported as unsupported.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>RoPE (rotary)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>rotate pair (2i, 2i+1) of q_m and k_n by m θ_i, n θ_i, θ_i = base^(-2i/d); probe (q = k = 1): sum_{i&lt;d/2} 2 cos((m-n) θ_i)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Rotary embeddings rotate queries and keys so that their dot product depends only on the relative distance. The probe shows the score of an all-ones query and key: a slowly decaying oscillation. Unseen rotation angles past the training length hurt extrapolation.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>XPOS (rotary with exponential decay)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>rope, then q_m *= ζ_i^(m/s), k_n *= ζ_i^(-n/s), ζ_i = (2i + γd)/((1+γ)d); probe: sum_i 2 cos((m-n) θ_i) ζ_i^((m-n)/s)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>XPOS multiplies the rotary score by a per-frequency exponential decay in distance, making long-range scores smaller and steadier. It is causal only; with blockwise causal attention (bca) it extrapolates further.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>T5 relative buckets</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>b_h(m, n) = B[bucket(n - m), h]; exact buckets below num-buckets/2, log-spaced up to max-distance</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A learned scalar per (bucket, head). Near distances get their own bucket, far ones share log-spaced buckets, everything past max-distance the last one. Without a trained model the table shows its untrained prior -log(1 + distance).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>ALiBi (linear biases)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>b_h(m, n) = -slope_h (m - n); slope_h = 2^(-8(h+1)/H) for H a power of two</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Attention with Linear Biases: a fixed penalty proportional to distance, with a geometric sequence of slopes across heads. No position embedding at all; trains short and tests long.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>KERPLE (power kernel)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>b_h(m, n) = -r1 |m - n|^r2,  r1 &gt; 0, 0 &lt; r2 &lt;= 2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>KERPLE derives relative biases from conditionally positive definite kernels. The power variant generalises ALiBi (r2 = 1); r1 and r2 are trained per head.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>KERPLE (logarithmic kernel)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>b_h(m, n) = -r1 log(1 + r2 |m - n|),  r1, r2 &gt; 0</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The logarithmic KERPLE variant: the penalty grows only logarithmically with distance, so far tokens stay reachable. r1 and r2 are trained per head.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sandwich</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>b_h(m, n) = (sum_{i&lt;d/2} cos((m-n) w_i) - d/2) H / (8 (h+1)),  w_i = base^(-2i/d)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sandwich uses the sinusoidal dot product itself as a relative bias, scaled per head like ALiBi&apos;s slopes: it decays roughly logarithmically and oscillates a little.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Local attention (super baseline)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>b(m, n) = 0 if 0 &lt;= m - n &lt; window (bidirectional: |m - n| &lt; window), else -inf</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The &apos;super baseline&apos; of the length-extrapolation literature: each query sees only the last `window` keys, its training context. It can never meet a distance it was not trained on. In a model the windows chain through the layers (a token reaches layers x (window - 1) back), so a model&apos;s default window keeps that whole reach inside the training context.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Blockwise causal attention</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>blocks of window/2; query m sees keys n &lt;= m in its own block and the previous one</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>XPOS&apos;s blockwise causal attention: a sliding window made of blocks, so every query sees between window/2 and window keys, all at distances seen in training.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>dimension of the sinusoid / rotation (number of frequencies x 2)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>wavelength base: frequencies are base^(-2i/dim)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>decay offset γ: larger means weaker decay</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>scale s: the distance over which ζ acts</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>number of buckets (halved per direction when bidirectional)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>distance from which all keys share the last bucket</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>scale of the penalty</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>power of the distance (1 = ALiBi-like)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>distance scale inside the logarithm</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>number of visible keys (default: the training context; in a model of L layers the largest W with L (W - 1) + 1 &lt;= context)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>window (two blocks of window/2 keys)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>even integers in %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>integers in %1</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>plab::ui::AttentionView</name>
    <message>
        <source>Attention on text</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&lt;b&gt;Model&lt;/b&gt;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Models trained in the Train tab appear here; checkpoints load with the button</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Load checkpoint…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Save model…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Write the chosen model as a .safetensors checkpoint (for later, or the command line)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&lt;b&gt;Text&lt;/b&gt; (bytes are the tokens)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Transformer layer (1..layers)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Layer</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>off</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Repeat the text to this many bytes, to see the model past its training context</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Repeat to N</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The head comes from the panel. Hover a cell for (m, n, probability).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Attention on text needs a trained model: train one in the &quot;Train short / test long&quot; tab or load a checkpoint (.safetensors) here.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Load checkpoint</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Checkpoints (*.safetensors)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Save model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Saved %1 to %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 layers · d_model %2 · %3 heads · context %4 · scheme %5</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>query m = %1 &apos;%2&apos;, key n = %3 &apos;%4&apos;, probability = %5</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>masked</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>views.attention.model: %1 is not among the session&apos;s checkpoints</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>plab::ui::BiasView</name>
    <message>
        <source>T5 bucket indices</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>t5 only: show which bucket each (m, n) falls in instead of its bias</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reset zoom</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Show the whole matrix (Ctrl+0; also double-click)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>wheel: zoom · drag: pan · double-click: whole matrix</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>m = %1, n = %2, value = %3   (head %4)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Bias</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>plab::ui::CompareView</name>
    <message>
        <source>Schemes:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>How many schemes side by side (2-4)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>shared colour scale</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>One colour scale for every panel, so equal colours mean equal values</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reset zoom</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>difference A − B:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Add a panel with A − B on a diverging scale centred on 0 (masked where either is masked)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A of the difference A − B</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>B of the difference A − B</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Length, head, mask and colour map come from the panel; the panel&apos;s scheme uses its parameters, the others their defaults (window = context, else 16).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: m = %2, n = %3, %4 = %5</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>difference</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>value</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>masked in A or B</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Compare</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>plab::ui::DotView</name>
    <message>
        <source>Sinusoidal dot</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&lt;b&gt;Curves&lt;/b&gt; (dim, base)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>dim d</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>base</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Each row is one curve: dim even in [2, 4096], base &gt; 1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Add</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Remove</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Largest distance</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>logarithmic distance axis</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>dot(p_m, p_n) − d/2 = Σ cos(r w_i) − d/2: zero at r = 0, then an oscillating decay; larger bases decay more slowly.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>plab::ui::EntropyView</name>
    <message>
        <source>Entropy</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&lt;b&gt;Schemes&lt;/b&gt; (one curve each)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>q and k</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>zero (bias alone)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>random (seeded Gaussian)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>from a trained model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Train a model in the Train tab or load a checkpoint in Attention on text</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>layer </source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>seed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>lengths 16 … </source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>entropy of</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the last query</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the mean over queries</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Heads, the shown head, mask, context and logn come from the panel. Rotary schemes with q = k = 0 attend uniformly: their curve is log n.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Entropy: tick at least one scheme</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>plab::ui::ExportDialog</name>
    <message>
        <source>Export</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Browse…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>File</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Pictures: .png .svg .pdf · data: .csv .json .npy (the extension decides)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>pixels</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Size</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>DPI</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>dark background</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>PNG image (*.png);;SVG vector image (*.svg);;PDF document (*.pdf);;CSV data (*.csv);;JSON data (*.json);;NumPy array (*.npy)</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>plab::ui::MainWindow</name>
    <message>
        <source>PositionLab</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Scheme and parameters</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stop the running computation (Esc)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Canceled</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Open session…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open &amp;recent</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Save session</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Save session &amp;as…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open &amp;corpus…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ctrl+Shift+O</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Export view…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ctrl+E</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copy &amp;image</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ctrl+Shift+C</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;View</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ctrl+%1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reset &amp;zoom</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ctrl+0</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Dark palette</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ctrl+Shift+D</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Language</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Keyboard shortcuts</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Keyboard shortcuts</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ctrl+O open session · Ctrl+S save · Ctrl+Shift+S save as
Ctrl+E export view · Ctrl+Shift+C copy image · Ctrl+Shift+O open corpus
Ctrl+1…6 views · Ctrl+0 reset zoom · Ctrl+Shift+D dark palette · Esc cancel job
Heatmaps: wheel zoom, drag pan, double-click whole matrix, hover for (m, n, value)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;About PositionLab</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>About PositionLab</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>PositionLab 0.1 — positional encodings and length extrapolation in transformers.
Every number shown comes from the core library; positionlab-cli renders the same pictures headless.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Language</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Changing the language now rebuilds the window. Running computations and the training results shown in &quot;Train short / test long&quot; are not kept (the trained models are). Change it now, or at the next start?</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Change now</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>At the next start</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The language changes at the next start.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>PositionLab — %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>Session saved. %n model(s) trained here are not in it: save them with Save model… in Attention on text, then save the session again.</source>
        <translation type="unfinished">
            <numerusform></numerusform>
        </translation>
    </message>
    <message>
        <source>Open session</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: cannot open as a corpus (%2)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: the corpus is empty</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: not UTF-8 text; a corpus must be a UTF-8 text file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Corpus: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>this view has nothing to export yet (it needs a trained model)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>this view has nothing to export yet</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: unknown extension; allowed: .png .svg .pdf .csv .json .npy</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Exported %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>This view has nothing to export yet.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Nothing to copy in this view</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Image copied to the clipboard</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>PositionLab session (*.json)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Save session</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open corpus</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Text (*.txt);;All files (*)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Drop</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>plab::ui::SchemePanel</name>
    <message>
        <source>%1
allowed: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&lt;b&gt;Scheme&lt;/b&gt;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Attention</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>causal</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>bidirectional</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Mask</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Heads H</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Head shown in the views (1..H)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Show head</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sequence length N (1..%1)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Length N</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>logn past L =</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Scale row m&apos;s scores by log(m+1)/log(L) when m+1 &gt; L (entropy invariance)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>none</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Training context L: the logn threshold and the default window of local/bca</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Context</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>auto (diverging for signed data)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Colour map</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Parameters</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&lt;b&gt;Formula&lt;/b&gt;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>(no parameters)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Parameters of %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>logn needs a training context L &gt;= 2 (the threshold of log(m+1)/log(L))</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>plab::ui::ThumbnailStrip</name>
    <message>
        <source>One thumbnail per head: click to show that head</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>head %1</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>plab::ui::TrainView</name>
    <message>
        <source>Train short / test long</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&lt;b&gt;Schemes&lt;/b&gt; to train</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>tiny (1 layer, d 64, L 32)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>quick (2 layers, d 128, L 64)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Model size; &apos;quick&apos; is the CLI&apos;s default preset</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Steps</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>non-overlapping</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>sliding window</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Evaluation</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>all</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Held-out bytes scored per length (the last 10% of the corpus)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Eval bytes</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Train</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Trains each scheme at context L, then scores held-out text at L, 2L, 4L, 8L, 16L.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Corpus: fortunes (default; drop a text file on the window to change)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Corpus: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Train: tick at least one scheme</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Training %1 scheme(s)…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: step %2 of %3, loss %4</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Canceled.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Done.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>canceled</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>scheme</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>ppl @ %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>unsupported</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>loss %1 nats/byte, %2 bits/byte, %3 bytes scored</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>plab::ui::ViewBase</name>
    <message>
        <source>masked (−inf)</source>
        <translation type="unfinished"></translation>
    </message>
</context>
</TS>
