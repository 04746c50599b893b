<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>CommandLine</name>
    <message>
        <source>Positional encodings and length extrapolation in transformers</source>
        <translation>Transformer 中的位置编码与长度外推</translation>
    </message>
    <message>
        <source>A session file to open (optional)</source>
        <translation>要打开的会话文件（可选）</translation>
    </message>
    <message>
        <source>Drive every view, save DIR/&lt;view&gt;.png, and quit (for the README)</source>
        <translation>逐一驱动每个视图，保存为 DIR/&lt;视图&gt;.png 后退出（供 README 使用）</translation>
    </message>
    <message>
        <source>Save the rotary length-extension pictures to DIR and quit</source>
        <translation>把旋转位置编码长度扩展的图保存到 DIR 后退出</translation>
    </message>
    <message>
        <source>Interface language for this run: %1 (default: the one chosen in View &gt; Language)</source>
        <translation>本次运行的界面语言：%1（默认：在 视图 &gt; 语言 中选定的语言）</translation>
    </message>
    <message>
        <source>Save every view as the window opens on this screen, with the Lessons dock open, to DIR and quit (to check that nothing is clipped)</source>
        <translation>将窗口在此屏幕上打开时的每个视图（课程面板打开）保存到 DIR 后退出（用于检查没有内容被截断）</translation>
    </message>
    <message>
        <source>Open a Hugging Face model folder in the Your model tab</source>
        <translation>在“你的模型”标签页中打开一个 Hugging Face 模型文件夹</translation>
    </message>
    <message>
        <source>Save the Your model tab&apos;s pictures of the --model folder to DIR and quit</source>
        <translation>把 --model 文件夹在“你的模型”标签页中的图保存到 DIR 后退出</translation>
    </message>
    <message>
        <source>Run the DroPE recipe on passkey in the Train tab as the window opens on this screen, save it running and done to DIR, and quit</source>
        <translation>在“训练”页按本屏幕上窗口打开时的大小对 passkey 运行 DroPE 流程，把运行中和完成时的截图保存到 DIR 后退出</translation>
    </message>
    <message>
        <source>Save the Rotary frequencies view with keep and rotary-fraction, the Train tab with its model options and FIRE&apos;s learned curve, as the window opens on this screen, to DIR and quit</source>
        <translation>将带 keep 和 rotary-fraction 的“旋转频率”视图、带模型选项的“训练”页以及 FIRE 学习到的曲线按窗口在此屏幕上打开时的样子保存到 DIR，然后退出</translation>
    </message>
</context>
<context>
    <name>FigureText</name>
    <message>
        <source>%1: x = %2, y = %3</source>
        <translation>%1：x = %2，y = %3</translation>
    </message>
    <message>
        <source>out of memory</source>
        <translation>内存不足</translation>
    </message>
    <message>
        <source>head %1 of %2</source>
        <translation>第 %1 个头（共 %2 个）</translation>
    </message>
    <message>
        <source>bidirectional</source>
        <translation>双向</translation>
    </message>
    <message>
        <source>causal</source>
        <translation>因果</translation>
    </message>
    <message>
        <source>logn (L = %1)</source>
        <translation>logn（L = %1）</translation>
    </message>
    <message>
        <source>T5 bucket of n − m</source>
        <translation>n − m 的 T5 桶编号</translation>
    </message>
    <message>
        <source>probe score (q = k = 1)</source>
        <translation>探针分数（q = k = 1）</translation>
    </message>
    <message>
        <source>bias b(m, n)</source>
        <translation>偏置 b(m, n)</translation>
    </message>
    <message>
        <source>%1 × logn scale</source>
        <translation>%1 × logn 缩放</translation>
    </message>
    <message>
        <source>%1: bucket map</source>
        <translation>%1：桶映射</translation>
    </message>
    <message>
        <source>%1: probe score</source>
        <translation>%1：探针分数</translation>
    </message>
    <message>
        <source>%1: dot(p_m, p_n) − d/2</source>
        <translation>%1：dot(p_m, p_n) − d/2</translation>
    </message>
    <message>
        <source>%1: attention bias</source>
        <translation>%1：注意力偏置</translation>
    </message>
    <message>
        <source>Compare: %1</source>
        <translation>对比：%1</translation>
    </message>
    <message>
        <source> vs </source>
        <translation> 与 </translation>
    </message>
    <message>
        <source>Difference %1</source>
        <translation>差值 %1</translation>
    </message>
    <message>
        <source>Sinusoidal position embeddings: dot(p_m, p_n) − d/2</source>
        <translation>正弦位置编码：dot(p_m, p_n) − d/2</translation>
    </message>
    <message>
        <source>distance |m − n|</source>
        <translation>距离 |m − n|</translation>
    </message>
    <message>
        <source>d = %1, base = %2</source>
        <translation>d = %1，底数 = %2</translation>
    </message>
    <message>
        <source>last query</source>
        <translation>最后一个查询</translation>
    </message>
    <message>
        <source>mean over queries</source>
        <translation>所有查询的平均</translation>
    </message>
    <message>
        <source>random</source>
        <translation>随机</translation>
    </message>
    <message>
        <source>from the model</source>
        <translation>取自模型</translation>
    </message>
    <message>
        <source>sequence length n</source>
        <translation>序列长度 n</translation>
    </message>
    <message>
        <source>entropy (nats)</source>
        <translation>熵（奈特）</translation>
    </message>
    <message>
        <source>log n (uniform)</source>
        <translation>log n（均匀分布）</translation>
    </message>
    <message>
        <source>key position n</source>
        <translation>键位置 n</translation>
    </message>
    <message>
        <source>query position m</source>
        <translation>查询位置 m</translation>
    </message>
    <message>
        <source>masked</source>
        <translation>已掩码</translation>
    </message>
    <message>
        <source>%1 (%2, step %3)</source>
        <translation>%1（%2，第 %3 步）</translation>
    </message>
    <message>
        <source>Attention on text: %1</source>
        <translation>文本上的注意力：%1</translation>
    </message>
    <message>
        <source>key (byte n)</source>
        <translation>键（第 n 个字节）</translation>
    </message>
    <message>
        <source>query (byte m)</source>
        <translation>查询（第 m 个字节）</translation>
    </message>
    <message>
        <source>attention probability</source>
        <translation>注意力概率</translation>
    </message>
    <message>
        <source>nats</source>
        <translation>奈特</translation>
    </message>
    <message>
        <source>row entropy</source>
        <translation>行熵</translation>
    </message>
    <message>
        <source>log(m + 1) (uniform)</source>
        <translation>log(m + 1)（均匀分布）</translation>
    </message>
    <message>
        <source>training context L = %1</source>
        <translation>训练上下文长度 L = %1</translation>
    </message>
    <message>
        <source>Training loss (context L = %1)</source>
        <translation>训练损失（上下文长度 L = %1）</translation>
    </message>
    <message>
        <source>step</source>
        <translation>步数</translation>
    </message>
    <message>
        <source>loss (nats per byte)</source>
        <translation>损失（奈特每字节）</translation>
    </message>
    <message>
        <source>Perplexity vs length (L = %1)</source>
        <translation>困惑度随长度的变化（L = %1）</translation>
    </message>
    <message>
        <source>evaluation length (bytes)</source>
        <translation>评估长度（字节）</translation>
    </message>
    <message>
        <source>perplexity (per byte)</source>
        <translation>困惑度（按字节）</translation>
    </message>
    <message>
        <source>%1 (%2, trained here, %3 steps)</source>
        <translation>%1（%2，在此训练，%3 步）</translation>
    </message>
    <message>
        <source>head h = %1 of 0..%2</source>
        <translation>头 h = %1（0..%2）</translation>
    </message>
    <message>
        <source>head h = %1</source>
        <translation>头 h = %1</translation>
    </message>
    <message>
        <source>head %1</source>
        <translation>第 %1 个头</translation>
    </message>
    <message>
        <source>layer l = %1</source>
        <translation>层 l = %1</translation>
    </message>
    <message>
        <source>layer %1</source>
        <translation>第 %1 层</translation>
    </message>
    <message>
        <source>masked where either is masked</source>
        <translation>任一方被掩码处即掩码</translation>
    </message>
    <message>
        <source>Attention entropy vs length (%1, %2, q·k %3)</source>
        <translation>注意力熵随长度的变化（%1，%2，q·k %3）</translation>
    </message>
    <message>
        <source>N = %1 bytes</source>
        <translation>N = %1 字节</translation>
    </message>
    <message>
        <source>training context %1</source>
        <translation>训练上下文长度 %1</translation>
    </message>
    <message>
        <source>Entropy of each query&apos;s attention (%1)</source>
        <translation>每个查询的注意力熵（%1）</translation>
    </message>
    <message>
        <source>%1 + %2</source>
        <translation>%1 + %2</translation>
    </message>
    <message>
        <source>Rotary frequencies: %1 + %2 (d = %3, base = %4, L = %5)</source>
        <translation>旋转频率：%1 + %2（d = %3，底数 = %4，L = %5）</translation>
    </message>
    <message>
        <source>pair index i</source>
        <translation>频率对序号 i</translation>
    </message>
    <message>
        <source>frequency θ (radians per position)</source>
        <translation>频率 θ（每个位置的弧度）</translation>
    </message>
    <message>
        <source>θ_i = base^(−2i/d)</source>
        <translation>θ_i = base^(−2i/d)</translation>
    </message>
    <message>
        <source>θ&apos;_i (%1)</source>
        <translation>θ&apos;_i（%1）</translation>
    </message>
    <message>
        <source>θ&apos;_i / θ_i (1: kept, 1/s: interpolated)</source>
        <translation>θ&apos;_i / θ_i（1：保留，1/s：插值）</translation>
    </message>
    <message>
        <source>θ = 2π/L: wavelength = training context</source>
        <translation>θ = 2π/L：波长 = 训练上下文长度</translation>
    </message>
    <message>
        <source> · positions past w = %1 remapped, frequencies unchanged</source>
        <translation> · 超过 w = %1 的位置被重映射，频率不变</translation>
    </message>
    <message>
        <source> · logits × %1</source>
        <translation> · logits × %1</translation>
    </message>
    <message>
        <source>%1 (%2, trained here, %3 steps, seed %4)</source>
        <translation>%1（%2，在此训练，%3 步，种子 %4）</translation>
    </message>
    <message>
        <source>Perplexity vs length, mean ± sd over seeds (L = %1)</source>
        <translation>困惑度随长度变化，各种子的均值 ± 标准差（L = %1）</translation>
    </message>
    <message>
        <source>Perplexity vs length of %1 under each method (L = %2)</source>
        <translation>%1 在各方法下的困惑度随长度变化（L = %2）</translation>
    </message>
    <message>
        <source>evaluation length (tokens)</source>
        <translation>评估长度（词元）</translation>
    </message>
    <message>
        <source>perplexity (per token)</source>
        <translation>困惑度（按词元）</translation>
    </message>
    <message>
        <source>%1 (n = %2)</source>
        <translation>%1（n = %2）</translation>
    </message>
    <message>
        <source>Perplexity vs length per method (%1, L = %2)</source>
        <translation>各方法下困惑度随长度的变化（%1，L = %2）</translation>
    </message>
    <message>
        <source>θ_i = base^(−2i/r), r = %1: %2 pairs turn</source>
        <translation>θ_i = base^(−2i/r)，r = %1：%2 对旋转</translation>
    </message>
    <message>
        <source>whole head: base^(−2i/d), every pair</source>
        <translation>整个头：base^(−2i/d)，每一对</translation>
    </message>
    <message>
        <source> · pairs %1 to %2 not rotated (θ = 0)</source>
        <translation> · 第 %1 到 %2 对不旋转（θ = 0）</translation>
    </message>
    <message>
        <source>This figure needs a Hugging Face model folder (config.json, the weights, tokenizer.json). In the app: File → Open model folder…; on the command line: --model DIR.</source>
        <translation>这幅图需要一个 Hugging Face 模型文件夹（config.json、权重、tokenizer.json）。在程序中：文件 → 打开模型文件夹…；在命令行上：--model DIR。</translation>
    </message>
    <message>
        <source>No model folder</source>
        <translation>没有模型文件夹</translation>
    </message>
    <message>
        <source>Family</source>
        <translation>家族</translation>
    </message>
    <message>
        <source>Layers</source>
        <translation>层数</translation>
    </message>
    <message>
        <source>Heads</source>
        <translation>头数</translation>
    </message>
    <message>
        <source>%1 query, %2 key/value</source>
        <translation>%1 个查询头，%2 个键/值头</translation>
    </message>
    <message>
        <source>Head dim</source>
        <translation>头维度</translation>
    </message>
    <message>
        <source>Context</source>
        <translation>上下文</translation>
    </message>
    <message>
        <source>%1 tokens</source>
        <translation>%1 个词元</translation>
    </message>
    <message>
        <source>Positions</source>
        <translation>位置编码</translation>
    </message>
    <message>
        <source>Rope theta</source>
        <translation>Rope theta</translation>
    </message>
    <message>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <source>Scaling</source>
        <translation>缩放</translation>
    </message>
    <message>
        <source>Parameters</source>
        <translation>参数量</translation>
    </message>
    <message>
        <source>%1 M</source>
        <translation>%1 M</translation>
    </message>
    <message>
        <source>Memory</source>
        <translation>内存</translation>
    </message>
    <message>
        <source>no model folder is open</source>
        <translation>没有打开模型文件夹</translation>
    </message>
    <message>
        <source>the text gives no tokens; allowed: a text of at least one token</source>
        <translation>该文本没有产生任何词元；允许：至少含一个词元的文本</translation>
    </message>
    <message>
        <source>the text has %1 tokens; allowed: at most %2 in this view</source>
        <translation>该文本有 %1 个词元；允许：此视图中最多 %2 个</translation>
    </message>
    <message>
        <source>the default corpus</source>
        <translation>默认语料</translation>
    </message>
    <message>
        <source>no method is ticked; allowed: at least one</source>
        <translation>没有勾选任何方法；允许：至少一个</translation>
    </message>
    <message>
        <source>%1 (config&apos;s own)</source>
        <translation>%1（config 自带）</translation>
    </message>
    <message>
        <source>Attention of %1 on your text</source>
        <translation>%1 在你的文本上的注意力</translation>
    </message>
    <message>
        <source>key token</source>
        <translation>键词元</translation>
    </message>
    <message>
        <source>query token</source>
        <translation>查询词元</translation>
    </message>
    <message>
        <source>tokens %1–%2 of %3</source>
        <translation>词元 %1–%2（共 %3 个）</translation>
    </message>
    <message>
        <source> · first token left out of the colour scale</source>
        <translation> · 第一个词元不计入颜色刻度</translation>
    </message>
    <message>
        <source>Attention on the first token (sinks)</source>
        <translation>落在第一个词元上的注意力（汇聚点）</translation>
    </message>
    <message>
        <source>head</source>
        <translation>头</translation>
    </message>
    <message>
        <source>layer</source>
        <translation>层</translation>
    </message>
    <message>
        <source>mean over %1 queries of p(m, 0)</source>
        <translation>p(m, 0) 在 %1 个查询上的平均</translation>
    </message>
    <message>
        <source>attention mass on token 0</source>
        <translation>第 0 个词元上的注意力质量</translation>
    </message>
    <message>
        <source>Attention entropy against length on your text</source>
        <translation>你的文本上注意力熵随长度的变化</translation>
    </message>
    <message>
        <source>tokens the query sees (m + 1)</source>
        <translation>查询看到的词元数（m + 1）</translation>
    </message>
    <message>
        <source>entropy (nats), mean over heads</source>
        <translation>熵（奈特），各头平均</translation>
    </message>
    <message>
        <source>log n (uniform attention)</source>
        <translation>log n（均匀注意力）</translation>
    </message>
    <message>
        <source>Accuracy vs length, mean ± sd over %1 seeds (task %2, trained at 1..%3)</source>
        <translation>准确率随长度变化，%1 个种子的均值 ± 标准差（任务 %2，训练长度 1..%3）</translation>
    </message>
    <message>
        <source>Accuracy vs length (task %1, trained at 1..%2)</source>
        <translation>准确率随长度变化（任务 %1，训练长度 1..%2）</translation>
    </message>
    <message>
        <source>task length (%1)</source>
        <translation>任务长度（%1）</translation>
    </message>
    <message>
        <source>exact-match accuracy (all depths)</source>
        <translation>完全匹配准确率（全部深度）</translation>
    </message>
    <message>
        <source>exact-match accuracy</source>
        <translation>完全匹配准确率</translation>
    </message>
    <message>
        <source>Passkey retrieval: accuracy by needle depth and length (trained at 1..%1)</source>
        <translation>Passkey 检索：按针的深度和长度的准确率（训练长度 1..%1）</translation>
    </message>
    <message>
        <source>length n (filler)</source>
        <translation>长度 n（填充）</translation>
    </message>
    <message>
        <source>needle depth</source>
        <translation>针的深度</translation>
    </message>
    <message numerus="yes">
        <source>mean over %n seed(s)</source>
        <translation>
            <numerusform>%n 个种子的均值</numerusform>
        </translation>
    </message>
    <message>
        <source>accuracy</source>
        <translation>准确率</translation>
    </message>
    <message>
        <source>%1 (NoPE layer: no positions)</source>
        <translation>%1（NoPE 层：不读位置）</translation>
    </message>
    <message>
        <source>positional bias added to the logit</source>
        <translation>加到 logit 上的位置偏置</translation>
    </message>
    <message>
        <source>contextual position p(m, n)</source>
        <translation>上下文位置 p(m, n)</translation>
    </message>
    <message>
        <source>Positional bias on text: %1</source>
        <translation>文本上的位置偏置：%1</translation>
    </message>
    <message>
        <source>Contextual positions on text: %1</source>
        <translation>文本上的上下文位置：%1</translation>
    </message>
    <message>
        <source>FIRE, untrained: bias against distance at row m = %1, head h = %2 of 0..%3 (T = %4)</source>
        <translation>FIRE（未训练）：第 m = %1 行、头 h = %2（0..%3）的偏置随距离变化（T = %4）</translation>
    </message>
    <message>
        <source>FIRE learned vs untrained: row m = %1, head h = %2 of 0..%3 · %4 (T = %5, untrained %6)</source>
        <translation>FIRE 学习到的与未训练的对比：第 m = %1 行，头 h = %2（0..%3）· %4（T = %5，未训练时 %6）</translation>
    </message>
    <message>
        <source>distance m − n</source>
        <translation>距离 m − n</translation>
    </message>
    <message>
        <source>bias b_h(m, n)</source>
        <translation>偏置 b_h(m, n)</translation>
    </message>
    <message>
        <source>learned</source>
        <translation>学习到的</translation>
    </message>
    <message>
        <source>untrained initialisation</source>
        <translation>未训练的初始化</translation>
    </message>
    <message>
        <source>no attention has been computed yet</source>
        <translation>尚未计算注意力</translation>
    </message>
    <message>
        <source>key position n (blocks of about %1 tokens, max)</source>
        <translation>键位置 n（约 %1 个词元一块，取最大值）</translation>
    </message>
    <message>
        <source>queries %1–%2, keys %3–%4 of %5</source>
        <translation>查询 %1–%2，键 %3–%4（共 %5 个）</translation>
    </message>
    <message>
        <source>attention probability (block max)</source>
        <translation>注意力概率（块内最大值）</translation>
    </message>
    <message>
        <source> · BF16 products</source>
        <translation> · BF16 乘积</translation>
    </message>
    <message>
        <source>BFloat16 products</source>
        <translation>BFloat16 乘积</translation>
    </message>
    <message>
        <source>Float32</source>
        <translation>Float32</translation>
    </message>
    <message>
        <source>Precision</source>
        <translation>精度</translation>
    </message>
    <message>
        <source>%1 (%2 weights; %3 with one forward)</source>
        <translation>%1（%2 权重；含一次前向计算 %3）</translation>
    </message>
    <message>
        <source>no model is open</source>
        <translation>没有打开的模型</translation>
    </message>
    <message>
        <source>%1 (sliding: window %2)</source>
        <translation>%1（滑动层：窗口 %2）</translation>
    </message>
    <message>
        <source>%1 (chunked: chunk %2)</source>
        <translation>%1（分块层：块大小 %2）</translation>
    </message>
    <message>
        <source>%1 (full, NoPE: no positions)</source>
        <translation>%1（全局层，NoPE：不读位置）</translation>
    </message>
    <message>
        <source>%1 (full: %2)</source>
        <translation>%1（全局层：%2）</translation>
    </message>
    <message>
        <source>Retrieval (%1): accuracy by needle depth and length</source>
        <translation>检索（%1）：按针的深度和长度的准确率</translation>
    </message>
    <message>
        <source>length (tokens)</source>
        <translation>长度（词元数）</translation>
    </message>
    <message numerus="yes">
        <source>greedy answer, %n example(s) per cell</source>
        <translation>
            <numerusform>贪心答案，每格 %n 个样例</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>log-likelihood rank 1 of 10, %n example(s) per cell</source>
        <translation>
            <numerusform>对数似然在 10 个候选中排第 1，每格 %n 个样例</numerusform>
        </translation>
    </message>
    <message>
        <source>sliding layers</source>
        <translation>滑动窗口层</translation>
    </message>
    <message>
        <source>chunked layers</source>
        <translation>分块层</translation>
    </message>
    <message>
        <source>full layers</source>
        <translation>全注意力层</translation>
    </message>
    <message>
        <source>S sliding, window %1</source>
        <translation>S 滑动，窗口 %1</translation>
    </message>
    <message>
        <source>C chunked, chunk %1</source>
        <translation>C 分块，块长 %1</translation>
    </message>
    <message>
        <source>F full</source>
        <translation>F 全注意力</translation>
    </message>
    <message>
        <source>; attention soft cap %1</source>
        <translation>；注意力软上限 %1</translation>
    </message>
    <message>
        <source>; final soft cap %1</source>
        <translation>；输出软上限 %1</translation>
    </message>
    <message>
        <source>Layer types</source>
        <translation>层类型</translation>
    </message>
    <message>
        <source>Sliding rope</source>
        <translation>滑动层旋转编码</translation>
    </message>
    <message>
        <source>%1, theta %2 (the sliding layers&apos; own table)</source>
        <translation>%1，theta %2（滑动层自己的频率表）</translation>
    </message>
    <message numerus="yes">
        <source>%1 (%n layers)</source>
        <translation>
            <numerusform>%1（%n 层）</numerusform>
        </translation>
    </message>
    <message>
        <source>length (prompts file)</source>
        <translation>长度（按提示文件）</translation>
    </message>
</context>
<context>
    <name>ModelText</name>
    <message>
        <source>no model to save: train one in the Train tab or load a checkpoint</source>
        <translation>没有可保存的模型：请在“训练”页训练一个，或加载检查点</translation>
    </message>
    <message>
        <source>no model to keep: train one in the Train tab or load a checkpoint</source>
        <translation>没有可保留的模型：请在“训练”页训练一个，或加载检查点</translation>
    </message>
    <message>
        <source>no model: train one in the Train tab or load a checkpoint</source>
        <translation>没有模型：请在“训练”页训练一个，或加载检查点</translation>
    </message>
</context>
<context>
    <name>QPlatformTheme</name>
    <message>
        <source>OK</source>
        <translation>确定</translation>
    </message>
    <message>
        <source>Save</source>
        <translation>保存</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>Open</source>
        <translation>打开</translation>
    </message>
    <message>
        <source>&amp;Yes</source>
        <translation>是(&amp;Y)</translation>
    </message>
    <message>
        <source>&amp;No</source>
        <translation>否(&amp;N)</translation>
    </message>
    <message>
        <source>Apply</source>
        <translation>应用</translation>
    </message>
    <message>
        <source>Discard</source>
        <translation>放弃</translation>
    </message>
    <message>
        <source>Help</source>
        <translation>帮助</translation>
    </message>
</context>
<context>
    <name>SchemeText</name>
    <message>
        <source>NoPE (no positional encoding)</source>
        <translation>NoPE（无位置编码）</translation>
    </message>
    <message>
        <source>b(m, n) = 0   (causal mask only)</source>
        <translation>b(m, n) = 0   （仅因果掩码）</translation>
    </message>
    <message>
        <source>No position information at all. A causal decoder can still infer position from how many tokens it sees, which is why NoPE extrapolates better than one might expect.</source>
        <translation>完全不含位置信息。因果解码器仍能从它看到的词元个数推断出位置，这正是 NoPE 的外推能力比人们预想的更好的原因。</translation>
    </message>
    <message>
        <source>Sinusoidal (absolute)</source>
        <translation>正弦位置编码（绝对）</translation>
    </message>
    <message>
        <source>p[m,2i] = sin(m w_i), p[m,2i+1] = cos(m w_i), w_i = base^(-2i/d); view: dot(p_m, p_n) - d/2 = sum_{i&lt;d/2} cos((m-n) w_i) - d/2</source>
        <translation>p[m,2i] = sin(m w_i)，p[m,2i+1] = cos(m w_i)，w_i = base^(-2i/d)；视图：dot(p_m, p_n) - d/2 = sum_{i&lt;d/2} cos((m-n) w_i) - d/2</translation>
    </message>
    <message>
        <source>The original Transformer&apos;s absolute encoding, added to the token embedding. The dot product of two position vectors depends only on their distance and oscillates as it decays; past the training length the model meets position vectors it has never seen.</source>
        <translation>原始 Transformer 的绝对位置编码，加在词元嵌入上。两个位置向量的点积只取决于它们之间的距离，并在衰减中振荡；超出训练长度后，模型会遇到从未见过的位置向量。</translation>
    </message>
    <message>
        <source>Learned absolute</source>
        <translation>可学习的绝对位置编码</translation>
    </message>
    <message>
        <source>x_m = e(token_m) + P[m],  P a trained table of `context` rows</source>
        <translation>x_m = e(token_m) + P[m]，P 为训练得到的 `context` 行的表</translation>
    </message>
    <message>
        <source>A trained table of position vectors (GPT-2, BERT). It has no row for positions past the training context, so it cannot extrapolate at all: such positions are reported as unsupported.</source>
        <translation>一张训练得到的位置向量表（GPT-2、BERT）。对于超出训练上下文长度的位置，表中没有对应的行，因此完全无法外推：这些位置会被标为“不支持”。</translation>
    </message>
    <message>
        <source>RoPE (rotary)</source>
        <translation>RoPE（旋转位置编码）</translation>
    </message>
    <message>
        <source>XPOS (rotary with exponential decay)</source>
        <translation>XPOS（带指数衰减的旋转位置编码）</translation>
    </message>
    <message>
        <source>rope, then q_m *= ζ_i^(m/s), k_n *= ζ_i^(-n/s), ζ_i = (2i + γd)/((1+γ)d); probe: sum_i 2 cos((m-n) θ_i) ζ_i^((m-n)/s)</source>
        <translation>先做 rope，再令 q_m *= ζ_i^(m/s)，k_n *= ζ_i^(-n/s)，ζ_i = (2i + γd)/((1+γ)d)；探针：sum_i 2 cos((m-n) θ_i) ζ_i^((m-n)/s)</translation>
    </message>
    <message>
        <source>XPOS multiplies the rotary score by a per-frequency exponential decay in distance, making long-range scores smaller and steadier. It is causal only; with blockwise causal attention (bca) it extrapolates further.</source>
        <translation>XPOS 在旋转分数上乘以一个随距离指数衰减、且每个频率各不相同的因子，使远距离的分数更小也更平稳。它只支持因果注意力；配合分块因果注意力（bca）可以外推得更远。</translation>
    </message>
    <message>
        <source>T5 relative buckets</source>
        <translation>T5 相对位置分桶</translation>
    </message>
    <message>
        <source>b_h(m, n) = B[bucket(n - m), h]; exact buckets below num-buckets/2, log-spaced up to max-distance</source>
        <translation>b_h(m, n) = B[bucket(n - m), h]；num-buckets/2 以内每个距离一个桶，之后按对数间隔分桶，直到 max-distance</translation>
    </message>
    <message>
        <source>A learned scalar per (bucket, head). Near distances get their own bucket, far ones share log-spaced buckets, everything past max-distance the last one. Without a trained model the table shows its untrained prior -log(1 + distance).</source>
        <translation>每个（桶，头）学习一个标量。近距离各有自己的桶，远距离共享按对数间隔划分的桶，超过 max-distance 的全部落入最后一个桶。没有训练好的模型时，表中显示的是未训练的先验 -log(1 + 距离)。</translation>
    </message>
    <message>
        <source>ALiBi (linear biases)</source>
        <translation>ALiBi（线性偏置）</translation>
    </message>
    <message>
        <source>b_h(m, n) = -slope_h (m - n); slope_h = 2^(-8(h+1)/H) for H a power of two</source>
        <translation>b_h(m, n) = -slope_h (m - n)；当 H 为 2 的幂时，slope_h = 2^(-8(h+1)/H)</translation>
    </message>
    <message>
        <source>Attention with Linear Biases: a fixed penalty proportional to distance, with a geometric sequence of slopes across heads. No position embedding at all; trains short and tests long.</source>
        <translation>带线性偏置的注意力（Attention with Linear Biases）：施加与距离成正比的固定惩罚，各个头的斜率构成等比数列。完全不使用位置嵌入；短序列训练，长序列测试。</translation>
    </message>
    <message>
        <source>KERPLE (power kernel)</source>
        <translation>KERPLE（幂核）</translation>
    </message>
    <message>
        <source>b_h(m, n) = -r1 |m - n|^r2,  r1 &gt; 0, 0 &lt; r2 &lt;= 2</source>
        <translation>b_h(m, n) = -r1 |m - n|^r2，r1 &gt; 0，0 &lt; r2 &lt;= 2</translation>
    </message>
    <message>
        <source>KERPLE derives relative biases from conditionally positive definite kernels. The power variant generalises ALiBi (r2 = 1); r1 and r2 are trained per head.</source>
        <translation>KERPLE 从条件正定核推导出相对位置偏置。幂核变体是 ALiBi 的推广（r2 = 1 时即 ALiBi）；r1 和 r2 在每个头上分别训练。</translation>
    </message>
    <message>
        <source>KERPLE (logarithmic kernel)</source>
        <translation>KERPLE（对数核）</translation>
    </message>
    <message>
        <source>b_h(m, n) = -r1 log(1 + r2 |m - n|),  r1, r2 &gt; 0</source>
        <translation>b_h(m, n) = -r1 log(1 + r2 |m - n|)，r1, r2 &gt; 0</translation>
    </message>
    <message>
        <source>The logarithmic KERPLE variant: the penalty grows only logarithmically with distance, so far tokens stay reachable. r1 and r2 are trained per head.</source>
        <translation>KERPLE 的对数核变体：惩罚只随距离对数增长，因此远处的词元仍然可以被关注到。r1 和 r2 在每个头上分别训练。</translation>
    </message>
    <message>
        <source>Sandwich</source>
        <translation>Sandwich</translation>
    </message>
    <message>
        <source>b_h(m, n) = (sum_{i&lt;d/2} cos((m-n) w_i) - d/2) H / (8 (h+1)),  w_i = base^(-2i/d)</source>
        <translation>b_h(m, n) = (sum_{i&lt;d/2} cos((m-n) w_i) - d/2) H / (8 (h+1))，w_i = base^(-2i/d)</translation>
    </message>
    <message>
        <source>Sandwich uses the sinusoidal dot product itself as a relative bias, scaled per head like ALiBi&apos;s slopes: it decays roughly logarithmically and oscillates a little.</source>
        <translation>Sandwich 直接把正弦位置编码的点积用作相对位置偏置，并像 ALiBi 的斜率那样按头缩放：它大致按对数衰减，并略有振荡。</translation>
    </message>
    <message>
        <source>Local attention (super baseline)</source>
        <translation>局部注意力（超强基线）</translation>
    </message>
    <message>
        <source>b(m, n) = 0 if 0 &lt;= m - n &lt; window (bidirectional: |m - n| &lt; window), else -inf</source>
        <translation>若 0 &lt;= m - n &lt; window（双向时：|m - n| &lt; window），则 b(m, n) = 0，否则为 -inf</translation>
    </message>
    <message>
        <source>The &apos;super baseline&apos; of the length-extrapolation literature: each query sees only the last `window` keys, its training context. It can never meet a distance it was not trained on. In a model the windows chain through the layers (a token reaches layers x (window - 1) back), so a model&apos;s default window keeps that whole reach inside the training context.</source>
        <translation>长度外推文献中的“超强基线”：每个查询只能看到最近的 `window` 个键，即它的训练上下文。它永远不会遇到训练时没见过的距离。在模型中，各层的窗口会逐层串联（一个词元最远能向前看到 层数 × (window - 1) 个位置），因此模型的默认窗口会让这整个范围都落在训练上下文之内。</translation>
    </message>
    <message>
        <source>Blockwise causal attention</source>
        <translation>分块因果注意力</translation>
    </message>
    <message>
        <source>blocks of window/2; query m sees keys n &lt;= m in its own block and the previous one</source>
        <translation>块大小为 window/2；查询 m 能看到本块及前一块中满足 n &lt;= m 的键 n</translation>
    </message>
    <message>
        <source>XPOS&apos;s blockwise causal attention: a sliding window made of blocks, so every query sees between window/2 and window keys, all at distances seen in training.</source>
        <translation>XPOS 的分块因果注意力：由块组成的滑动窗口，使每个查询能看到 window/2 到 window 个键，且所有距离都在训练中出现过。</translation>
    </message>
    <message>
        <source>dimension of the sinusoid / rotation (number of frequencies x 2)</source>
        <translation>正弦 / 旋转的维度（频率个数 × 2）</translation>
    </message>
    <message>
        <source>wavelength base: frequencies are base^(-2i/dim)</source>
        <translation>波长底数：频率为 base^(-2i/dim)</translation>
    </message>
    <message>
        <source>decay offset γ: larger means weaker decay</source>
        <translation>衰减偏移 γ：越大衰减越弱</translation>
    </message>
    <message>
        <source>scale s: the distance over which ζ acts</source>
        <translation>缩放 s：ζ 起作用的距离尺度</translation>
    </message>
    <message>
        <source>number of buckets (halved per direction when bidirectional)</source>
        <translation>桶的个数（双向时每个方向各占一半）</translation>
    </message>
    <message>
        <source>distance from which all keys share the last bucket</source>
        <translation>从该距离起，所有键都共享最后一个桶</translation>
    </message>
    <message>
        <source>scale of the penalty</source>
        <translation>惩罚的尺度</translation>
    </message>
    <message>
        <source>power of the distance (1 = ALiBi-like)</source>
        <translation>距离的幂次（1 = 类似 ALiBi）</translation>
    </message>
    <message>
        <source>distance scale inside the logarithm</source>
        <translation>对数内的距离尺度</translation>
    </message>
    <message>
        <source>number of visible keys (default: the training context; in a model of L layers the largest W with L (W - 1) + 1 &lt;= context)</source>
        <translation>可见键的个数（默认：训练上下文长度；在 L 层的模型中取满足 L (W - 1) + 1 &lt;= context 的最大 W）</translation>
    </message>
    <message>
        <source>window (two blocks of window/2 keys)</source>
        <translation>窗口（两个各含 window/2 个键的块）</translation>
    </message>
    <message>
        <source>even integers in %1</source>
        <translation>%1 中的偶数</translation>
    </message>
    <message>
        <source>integers in %1</source>
        <translation>%1 中的整数</translation>
    </message>
    <message>
        <source>s: how many times longer than the training context</source>
        <translation>s：是训练上下文长度的多少倍</translation>
    </message>
    <message>
        <source>rotations over L above which a frequency is kept</source>
        <translation>在 L 内转过的圈数高于此值的频率保持不变</translation>
    </message>
    <message>
        <source>rotations over L below which a frequency is interpolated</source>
        <translation>在 L 内转过的圈数低于此值的频率被插值</translation>
    </message>
    <message>
        <source>multiplies cos and sin of q and k (0: 0.1 ln s + 1); logits scale by its square</source>
        <translation>乘在 q 和 k 的 cos 与 sin 上（0：0.1 ln s + 1）；logits 按其平方缩放</translation>
    </message>
    <message>
        <source>multiplies cos and sin of q and k (0: √(1 + ln s / ln L), 1 when s &lt;= 1); logits scale by its square</source>
        <translation>乘在 q 和 k 的 cos 与 sin 上（0：√(1 + ln s / ln L)，s &lt;= 1 时为 1）；logits 按其平方缩放</translation>
    </message>
    <message>
        <source>wavelengths above L/low are interpolated</source>
        <translation>波长大于 L/low 的被插值</translation>
    </message>
    <message>
        <source>wavelengths below L/high are kept</source>
        <translation>波长小于 L/high 的保持不变</translation>
    </message>
    <message>
        <source>w: distances below it keep their position (0: half the training context; must be &lt; L)</source>
        <translation>w：小于它的距离保留原位置（0：训练上下文长度的一半；必须 &lt; L）</translation>
    </message>
    <message>
        <source>k: positions past the window grow 1/k as fast</source>
        <translation>k：窗口之外的位置以 1/k 的速度增长</translation>
    </message>
    <message>
        <source>No length extension</source>
        <translation>无长度扩展</translation>
    </message>
    <message>
        <source>Position interpolation</source>
        <translation>位置插值</translation>
    </message>
    <message>
        <source>NTK-aware base scaling</source>
        <translation>NTK 感知的底数缩放</translation>
    </message>
    <message>
        <source>Dynamic NTK</source>
        <translation>动态 NTK</translation>
    </message>
    <message>
        <source>YaRN</source>
        <translation>YaRN</translation>
    </message>
    <message>
        <source>LongRoPE</source>
        <translation>LongRoPE</translation>
    </message>
    <message>
        <source>Llama 3 band-wise scaling</source>
        <translation>Llama 3 分段缩放</translation>
    </message>
    <message>
        <source>ReRoPE</source>
        <translation>ReRoPE</translation>
    </message>
    <message>
        <source>Leaky ReRoPE</source>
        <translation>Leaky ReRoPE</translation>
    </message>
    <message>
        <source>Self-Extend</source>
        <translation>Self-Extend（自扩展）</translation>
    </message>
    <message>
        <source>G: positions past the window are grouped G at a time</source>
        <translation>G：窗口之外的位置每 G 个合为一组</translation>
    </message>
    <message>
        <source>L: the context the model was first trained at (0: its training context)</source>
        <translation>L：模型最初训练时的上下文长度（0 表示其训练上下文）</translation>
    </message>
    <message>
        <source>keys n &lt; sinks stay visible to every query m &gt;= n (attention sinks); positions stay the original ones (no rolling re-index as in StreamingLLM)</source>
        <translation>键 n &lt; sinks 对每个满足 m &gt;= n 的查询都可见（注意力汇聚点）；位置保持原始编号（不像 StreamingLLM 那样在滚动缓存中重新编号）</translation>
    </message>
    <message>
        <source>rotate pair (2i, 2i+1) of q_m and k_n by m θ_i, n θ_i; θ_i = base^(-2i/r) for i &lt; round(p r/2), else 0; r = ⌊f d⌋ (f: rotary-fraction, p: keep); probe (q = k = 1): sum_{i&lt;d/2} 2 cos((m-n) θ_i)</source>
        <translation>将 q_m 与 k_n 的第 (2i, 2i+1) 对分量分别旋转 m θ_i、n θ_i；i &lt; round(p r/2) 时 θ_i = base^(-2i/r)，否则为 0；r = ⌊f d⌋（f：rotary-fraction，p：keep）；探针（q = k = 1）：sum_{i&lt;d/2} 2 cos((m-n) θ_i)</translation>
    </message>
    <message>
        <source>Rotary embeddings rotate queries and keys so that their dot product depends only on the relative distance. The probe shows the score of an all-ones query and key: a slowly decaying oscillation. Unseen rotation angles past the training length hurt extrapolation. keep &lt; 1 is p-RoPE (Barbero et al. 2025): only the highest frequencies turn, the lowest are set to 0. rotary-fraction &lt; 1 is GPT-NeoX&apos;s rotary_pct: only the first dims turn, over a full ladder of frequencies of their own.</source>
        <translation>旋转位置编码对查询和键进行旋转，使它们的点积只取决于相对距离。探针显示全 1 查询与全 1 键的分数：一条缓慢衰减的振荡曲线。超出训练长度后出现的未见过的旋转角度会损害外推。keep &lt; 1 即 p-RoPE（Barbero 等，2025）：只有最高的频率旋转，最低的频率置为 0。rotary-fraction &lt; 1 即 GPT-NeoX 的 rotary_pct：只有前面的维度旋转，并使用它们自己的一整套频率。</translation>
    </message>
    <message>
        <source>p-RoPE&apos;s p: the fraction of the pairs that turn, highest frequencies first; the others get θ = 0</source>
        <translation>p-RoPE 的 p：旋转的维度对所占比例，从最高频率起；其余的 θ = 0</translation>
    </message>
    <message>
        <source>GPT-NeoX&apos;s rotary_pct f: only the first ⌊f d⌋ dims turn, with θ_i = base^(-2i/⌊f d⌋)</source>
        <translation>GPT-NeoX 的 rotary_pct f：只有前 ⌊f d⌋ 维旋转，θ_i = base^(-2i/⌊f d⌋)</translation>
    </message>
    <message>
        <source>FIRE (learned function of the normalised distance)</source>
        <translation>FIRE（归一化距离的学习函数）</translation>
    </message>
    <message>
        <source>b_h(m, n) = MLP_h(ψ(m - n) / ψ(max(m, T))),  ψ(t) = ln(c t + 1),  MLP 1 -&gt; 32 -&gt; H (ReLU), c and T learned</source>
        <translation>b_h(m, n) = MLP_h(ψ(m - n) / ψ(max(m, T)))，ψ(t) = ln(c t + 1)，MLP 1 -&gt; 32 -&gt; H（ReLU），c 与 T 可学习</translation>
    </message>
    <message>
        <source>FIRE (Li et al., ICLR 2024) learns the bias as a function of the distance divided by the query&apos;s position (its &apos;progressive interpolation&apos;): inputs stay in [0, 1] at any length, and the log transform ψ keeps near distances apart. Rows m &lt;= T use T instead of m, so short sequences see a plain function of distance. It contains ALiBi and KERPLE as special cases. Without a trained model the view shows its untrained prior (the reference code&apos;s random initialisation, from a fixed seed).</source>
        <translation>FIRE（Li 等，ICLR 2024）把偏置学成“距离除以查询位置”的函数（即其“渐进插值”）：任何长度下输入都保持在 [0, 1] 内，对数变换 ψ 让近处的距离彼此分开。m &lt;= T 的行用 T 代替 m，因此短序列看到的只是距离的普通函数。ALiBi 与 KERPLE 都是它的特例。没有训练好的模型时，视图显示其未训练的先验（参考代码的随机初始化，取自固定种子）。</translation>
    </message>
    <message>
        <source>FoX (forgetting gate, data-dependent)</source>
        <translation>FoX（遗忘门，依赖数据）</translation>
    </message>
    <message>
        <source>b_h(m, n) = F_m - F_n,  F_t = sum_{l&lt;=t} ln σ(w_h . x_l + b_h),  x_l the layer&apos;s normed input; no other position; view (w = 0): -(m - n) ln(1 + e^(-b))</source>
        <translation>b_h(m, n) = F_m - F_n，F_t = sum_{l&lt;=t} ln σ(w_h . x_l + b_h)，x_l 为该层归一化后的输入；没有其他位置编码；视图（w = 0）：-(m - n) ln(1 + e^(-b))</translation>
    </message>
    <message>
        <source>The Forgetting Transformer (Lin et al., ICLR 2025) gives every head a forget gate f_t = σ(w_h . x_t + b_h) computed from the token itself: key n&apos;s score drops by -ln f_l for every later token l up to the query. The decay is learned and depends on the text (a gate near 1 keeps the past, near 0 wipes it); nothing else encodes position. Without a model the view shows the untrained gate (w = 0): an ALiBi line of slope ln(1 + e^(-b)) per token; a trained model&apos;s bias depends on the text it reads (the per-input view).</source>
        <translation>遗忘 Transformer（Lin 等，ICLR 2025）给每个头一个遗忘门 f_t = σ(w_h . x_t + b_h)，由词元本身算出：查询之前、键 n 之后的每个词元 l 都让键 n 的得分下降 -ln f_l。衰减是学出来的，并取决于文本（门接近 1 时保留过去，接近 0 时抹去过去）；除此之外没有任何东西编码位置。没有模型时，视图显示未训练的门（w = 0）：每个词元斜率为 ln(1 + e^(-b)) 的一条 ALiBi 直线；训练好的模型的偏置取决于它读到的文本（逐输入视图）。</translation>
    </message>
    <message>
        <source>initial scale c of ψ(t) = ln(c t + 1) (learned in a model)</source>
        <translation>ψ(t) = ln(c t + 1) 的初始尺度 c（在模型中学习）</translation>
    </message>
    <message>
        <source>initial threshold T: rows m &lt;= T are normalised by ψ(T) (learned in a model as a multiple of it)</source>
        <translation>初始阈值 T：m &lt;= T 的行用 ψ(T) 归一化（在模型中以其倍数学习）</translation>
    </message>
    <message>
        <source>initial forget-gate bias b of every head (learned in a model; 0, the reference code&apos;s, starts at f ≈ 1/2)</source>
        <translation>每个头遗忘门的初始偏置 b（在模型中学习；参考代码取 0，起始时 f ≈ 1/2）</translation>
    </message>
    <message>
        <source>CoPE (contextual positions)</source>
        <translation>CoPE（上下文位置）</translation>
    </message>
    <message>
        <source>b(m, n) = z_m(p_mn) interpolated between ⌊p⌋ and ⌈p⌉,  z_m(p) = q_m · E[:, p],  p_mn = min(Σ_{t=n..m} σ(q_m · k_t / √d), npos-max - 1),  E learned (d x npos-max, shared by the heads)</source>
        <translation>b(m, n) = 在 ⌊p⌋ 与 ⌈p⌉ 之间插值的 z_m(p_mn)，  z_m(p) = q_m · E[:, p]，  p_mn = min(Σ_{t=n..m} σ(q_m · k_t / √d), npos-max - 1)，  E 可学习（d x npos-max，各头共享）</translation>
    </message>
    <message>
        <source>CoPE (Golovneva et al. 2024) makes a position a count: each key t between n and the query m adds its gate σ(q_m · k_t / √d), a number between 0 and 1, so a head can count words or sentences instead of tokens. The position p_mn is looked up in a learned table of position embeddings (interpolated between integers) and its score against the query is added to the logit. The bias depends on the text, so it has no static view: the Attention on text tab shows a trained model&apos;s positions and bias on your text. The lab&apos;s path is exact and not fused: it costs more than the fused schemes.</source>
        <translation>CoPE（Golovneva 等，2024）把位置变成计数：查询 m 与键 n 之间的每个键 t 都加上它的门 σ(q_m · k_t / √d)，一个介于 0 和 1 之间的数，因此一个头可以数单词或句子，而不是数 token。位置 p_mn 在一张可学习的位置嵌入表中查得（在整数之间插值），它与查询的得分加到 logit 上。偏置取决于文本，所以它没有静态视图：“文本上的注意力”页显示训练好的模型在你的文本上的位置和偏置。本实验室的实现是精确的、未融合的：它比融合的方案更慢。</translation>
    </message>
    <message>
        <source>positions are clamped to npos-max - 1; E has npos-max columns (default: the training context in a model)</source>
        <translation>位置被截断到 npos-max - 1；E 有 npos-max 列（默认：模型中的训练上下文长度）</translation>
    </message>
</context>
<context>
    <name>TaskText</name>
    <message>
        <source>train rope</source>
        <translation>训练 rope</translation>
    </message>
    <message>
        <source>score rope and rope + YaRN zero-shot</source>
        <translation>评估 rope 以及零样本的 rope + YaRN</translation>
    </message>
    <message>
        <source>train NoPE from scratch</source>
        <translation>从头训练 NoPE</translation>
    </message>
    <message>
        <source>score NoPE</source>
        <translation>评估 NoPE</translation>
    </message>
    <message>
        <source>drop the positions and recalibrate</source>
        <translation>去掉位置并重新校准</translation>
    </message>
    <message>
        <source>score DroPE</source>
        <translation>评估 DroPE</translation>
    </message>
    <message>
        <source>rope + YaRN (zero-shot)</source>
        <translation>rope + YaRN（零样本）</translation>
    </message>
    <message>
        <source>NoPE</source>
        <translation>NoPE</translation>
    </message>
    <message>
        <source>DroPE (%1% recalibration, logit-c %2)</source>
        <translation>DroPE（重新校准 %1%，logit-c %2）</translation>
    </message>
    <message>
        <source>DroPE (%1% recalibration)</source>
        <translation>DroPE（重新校准 %1%）</translation>
    </message>
    <message>
        <source>seed %1 of %2: %3</source>
        <translation>种子 %1/%2：%3</translation>
    </message>
    <message>
        <source>train %1</source>
        <translation>训练 %1</translation>
    </message>
</context>
<context>
    <name>TrainingText</name>
    <message>
        <source>Evaluation at length %1 needs more held-out text: %2 of the %3 held-out bytes of %4 are scored, so a longer window cannot be filled. Lower the context L, raise Eval bytes, or use a longer corpus.</source>
        <translation>在长度 %1 上评估需要更多留出文本：%4 的 %3 个留出字节中只有 %2 个参与评分，填不满更长的窗口。请减小上下文长度 L、增大评估字节数，或使用更长的语料。</translation>
    </message>
</context>
<context>
    <name>plab::ui::AttentionView</name>
    <message>
        <source>Attention on text</source>
        <translation>文本上的注意力</translation>
    </message>
    <message>
        <source>&lt;b&gt;Model&lt;/b&gt;</source>
        <translation>&lt;b&gt;模型&lt;/b&gt;</translation>
    </message>
    <message>
        <source>Models trained in the Train tab appear here; checkpoints load with the button</source>
        <translation>在“训练”标签页中训练的模型会出现在这里；检查点可用按钮加载</translation>
    </message>
    <message>
        <source>Load checkpoint…</source>
        <translation>加载检查点…</translation>
    </message>
    <message>
        <source>Save model…</source>
        <translation>保存模型…</translation>
    </message>
    <message>
        <source>Write the chosen model as a .safetensors checkpoint (for later, or the command line)</source>
        <translation>将所选模型写成 .safetensors 检查点（供以后或命令行使用）</translation>
    </message>
    <message>
        <source>&lt;b&gt;Text&lt;/b&gt; (bytes are the tokens)</source>
        <translation>&lt;b&gt;文本&lt;/b&gt;（以字节为词元）</translation>
    </message>
    <message>
        <source>Transformer layer (1..layers)</source>
        <translation>Transformer 层（1..层数）</translation>
    </message>
    <message>
        <source>Layer</source>
        <translation>层</translation>
    </message>
    <message>
        <source>off</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>Repeat the text to this many bytes, to see the model past its training context</source>
        <translation>把文本重复到这么多字节，以观察模型在训练上下文之外的表现</translation>
    </message>
    <message>
        <source>Repeat to N</source>
        <translation>重复到 N</translation>
    </message>
    <message>
        <source>Load checkpoint</source>
        <translation>加载检查点</translation>
    </message>
    <message>
        <source>Checkpoints (*.safetensors)</source>
        <translation>检查点 (*.safetensors)</translation>
    </message>
    <message>
        <source>Save model</source>
        <translation>保存模型</translation>
    </message>
    <message>
        <source>Saved %1 to %2</source>
        <translation>已将 %1 保存到 %2</translation>
    </message>
    <message>
        <source>%1 layers · d_model %2 · %3 heads · context %4 · scheme %5</source>
        <translation>%1 层 · d_model %2 · %3 个头 · 上下文长度 %4 · 方案 %5</translation>
    </message>
    <message>
        <source>views.attention.model: %1 is not among the session&apos;s checkpoints</source>
        <translation>views.attention.model：%1 不在会话的检查点中</translation>
    </message>
    <message>
        <source>The head comes from the panel. Hover a cell for both positions, both characters and the probability.</source>
        <translation>注意力头由左侧面板选择。把鼠标悬停在格子上，可看到两个位置、两个字符和概率。</translation>
    </message>
    <message>
        <source>Attention on text needs a trained model. Train a demo model now, train several in the &quot;Train&quot; tab, or load a checkpoint (.safetensors) on the left.</source>
        <translation>“文本上的注意力”需要一个训练好的模型。可以现在训练一个演示模型，在“训练”页训练多个，或在左侧加载检查点（.safetensors）。</translation>
    </message>
    <message>
        <source>Type a text on the left: the model&apos;s attention on it appears here, one row per query character, one column per key character.</source>
        <translation>在左侧输入一段文本：模型在其上的注意力会显示在这里，每个查询字符一行，每个键字符一列。</translation>
    </message>
    <message>
        <source>The entropy of each query&apos;s attention appears here with the attention above.</source>
        <translation>每个查询的注意力熵会和上方的注意力一起显示在这里。</translation>
    </message>
    <message>
        <source>query %1 &apos;%2&apos; → key %3 &apos;%4&apos;: %5</source>
        <translation>查询 %1 &apos;%2&apos; → 键 %3 &apos;%4&apos;：%5</translation>
    </message>
    <message>
        <source>masked (the query cannot see it)</source>
        <translation>被遮蔽（该查询看不到它）</translation>
    </message>
    <message>
        <source>attention weights</source>
        <translation>注意力权重</translation>
    </message>
    <message>
        <source>positional bias</source>
        <translation>位置偏置</translation>
    </message>
    <message>
        <source>contextual positions</source>
        <translation>上下文位置</translation>
    </message>
    <message>
        <source>What the heatmap shows: the attention probabilities, the positional bias the scheme adds to each logit on this text, or CoPE&apos;s contextual positions (models with them only)</source>
        <translation>热图显示的内容：注意力概率、方案在这段文本上加到每个 logit 的位置偏置，或 CoPE 的上下文位置（仅限具有上下文位置的模型）</translation>
    </message>
    <message>
        <source>Show</source>
        <translation>显示</translation>
    </message>
</context>
<context>
    <name>plab::ui::BiasView</name>
    <message>
        <source>T5 bucket indices</source>
        <translation>T5 桶编号</translation>
    </message>
    <message>
        <source>t5 only: show which bucket each (m, n) falls in instead of its bias</source>
        <translation>仅限 t5：显示每个 (m, n) 落入哪个桶，而不是它的偏置</translation>
    </message>
    <message>
        <source>Reset zoom</source>
        <translation>重置缩放</translation>
    </message>
    <message>
        <source>Show the whole matrix (Ctrl+0; also double-click)</source>
        <translation>显示整个矩阵（Ctrl+0；或双击）</translation>
    </message>
    <message>
        <source>wheel: zoom · drag: pan · double-click: whole matrix</source>
        <translation>滚轮：缩放 · 拖动：平移 · 双击：整个矩阵</translation>
    </message>
    <message>
        <source>m = %1, n = %2, value = %3   (head %4)</source>
        <translation>m = %1，n = %2，值 = %3   （第 %4 个头）</translation>
    </message>
    <message>
        <source>Bias</source>
        <translation>偏置</translation>
    </message>
    <message>
        <source>Choose a scheme in the panel on the left: its bias matrix appears here.</source>
        <translation>在左侧面板中选择一种方案：它的偏置矩阵会显示在这里。</translation>
    </message>
    <message>
        <source>FIRE: learned curve</source>
        <translation>FIRE：学习到的曲线</translation>
    </message>
    <message>
        <source>fire only: a trained model&apos;s bias against the distance beside the untrained one, instead of the matrix</source>
        <translation>仅限 fire：不显示矩阵，改为显示训练好的模型的偏置随距离的变化，旁边是未训练的曲线</translation>
    </message>
    <message>
        <source>untrained only</source>
        <translation>仅未训练的</translation>
    </message>
    <message>
        <source>Open model…</source>
        <translation>打开模型…</translation>
    </message>
    <message>
        <source>A fire checkpoint (.safetensors) trained here or with positionlab-cli train fire</source>
        <translation>在这里训练的或用 positionlab-cli train fire 训练的 fire 检查点（.safetensors）</translation>
    </message>
    <message>
        <source>Trained model:</source>
        <translation>训练好的模型：</translation>
    </message>
    <message>
        <source>Open a FIRE model</source>
        <translation>打开 FIRE 模型</translation>
    </message>
    <message>
        <source>Checkpoints (*.safetensors)</source>
        <translation>检查点 (*.safetensors)</translation>
    </message>
    <message>
        <source>%1: its scheme is %2; the learned curve needs a fire model</source>
        <translation>%1：它的方案是 %2；学习到的曲线需要 fire 模型</translation>
    </message>
    <message>
        <source>Head h = %1 of 0..%2 at row m = %3 (the panel&apos;s length − 1). Past the threshold T the distance is divided by ψ(m), so a longer row reads the same distance differently.</source>
        <translation>头 h = %1（0..%2），第 m = %3 行（面板的长度 − 1）。超过阈值 T 后距离要除以 ψ(m)，所以更长的行对同一距离的读法不同。</translation>
    </message>
    <message>
        <source>The model has %1 heads: head h = %2 is shown (the panel&apos;s head h = %3 is not in it).</source>
        <translation>模型有 %1 个头：显示头 h = %2（面板的头 h = %3 不在其中）。</translation>
    </message>
    <message>
        <source>No trained FIRE model yet: the untrained initialisation alone. Tick fire in the Train tab and train it, or open a fire checkpoint, to draw its learned curve beside this one.</source>
        <translation>还没有训练好的 FIRE 模型：只显示未训练的初始化。在“训练”页勾选 fire 并训练，或打开一个 fire 检查点，就能在旁边画出它学习到的曲线。</translation>
    </message>
</context>
<context>
    <name>plab::ui::CompareView</name>
    <message>
        <source>Schemes:</source>
        <translation>方案：</translation>
    </message>
    <message>
        <source>How many schemes side by side (2-4)</source>
        <translation>并排显示的方案个数（2-4）</translation>
    </message>
    <message>
        <source>shared colour scale</source>
        <translation>共享颜色刻度</translation>
    </message>
    <message>
        <source>One colour scale for every panel, so equal colours mean equal values</source>
        <translation>所有面板使用同一颜色刻度，相同颜色即表示相同数值</translation>
    </message>
    <message>
        <source>Reset zoom</source>
        <translation>重置缩放</translation>
    </message>
    <message>
        <source>difference A − B:</source>
        <translation>差值 A − B：</translation>
    </message>
    <message>
        <source>Add a panel with A − B on a diverging scale centred on 0 (masked where either is masked)</source>
        <translation>添加一个面板，以 0 为中心的发散色标显示 A − B（任一方被掩码处即掩码）</translation>
    </message>
    <message>
        <source>A of the difference A − B</source>
        <translation>差值 A − B 中的 A</translation>
    </message>
    <message>
        <source>B of the difference A − B</source>
        <translation>差值 A − B 中的 B</translation>
    </message>
    <message>
        <source>Length, head, mask and colour map come from the panel; the panel&apos;s scheme uses its parameters, the others their defaults (window = context, else 16).</source>
        <translation>长度、头、掩码和颜色映射取自左侧面板；面板中选中的方案使用面板上的参数，其余方案使用默认值（window = 上下文长度，否则为 16）。</translation>
    </message>
    <message>
        <source>%1: m = %2, n = %3, %4 = %5</source>
        <translation>%1：m = %2，n = %3，%4 = %5</translation>
    </message>
    <message>
        <source>difference</source>
        <translation>差值</translation>
    </message>
    <message>
        <source>value</source>
        <translation>值</translation>
    </message>
    <message>
        <source>masked in A or B</source>
        <translation>在 A 或 B 中被掩码</translation>
    </message>
    <message>
        <source>Compare</source>
        <translation>对比</translation>
    </message>
    <message>
        <source>Choose 2 to 4 schemes above: their bias matrices appear here side by side.</source>
        <translation>在上方选择 2 到 4 种方案：它们的偏置矩阵会在这里并排显示。</translation>
    </message>
</context>
<context>
    <name>plab::ui::ContinueTextPage</name>
    <message>
        <source>Model:</source>
        <translation>模型：</translation>
    </message>
    <message>
        <source>Type or paste the beginning of a text</source>
        <translation>输入或粘贴一段文本的开头</translation>
    </message>
    <message>
        <source>Prompt:</source>
        <translation>提示：</translation>
    </message>
    <message>
        <source>off</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>Repeat the prompt&apos;s tokens until this many, to continue it past the model&apos;s context.</source>
        <translation>把提示的词元重复到这么多个，以便在超出模型上下文处续写。</translation>
    </message>
    <message>
        <source>Repeat to:</source>
        <translation>重复到：</translation>
    </message>
    <message>
        <source>The right-hand continuation&apos;s positions: a length-extension method applied zero-shot.</source>
        <translation>右侧续写所用的位置：零样本应用的一种长度外推方法。</translation>
    </message>
    <message>
        <source>Method:</source>
        <translation>方法：</translation>
    </message>
    <message>
        <source>Settings:</source>
        <translation>设置：</translation>
    </message>
    <message>
        <source>New bytes:</source>
        <translation>新字节数：</translation>
    </message>
    <message>
        <source>New tokens:</source>
        <translation>新词元数：</translation>
    </message>
    <message>
        <source>Sample</source>
        <translation>采样</translation>
    </message>
    <message>
        <source>Off: greedy, the likeliest token each time (the same text every run). On: drawn at the temperature from the k likeliest tokens (0: all), the same seed giving the same text.</source>
        <translation>关闭：贪心解码，每次取最可能的词元（每次运行文本相同）。打开：按温度从最可能的 k 个词元中抽取（0：全部），相同种子给出相同文本。</translation>
    </message>
    <message>
        <source>all</source>
        <translation>全部</translation>
    </message>
    <message>
        <source>Temperature:</source>
        <translation>温度：</translation>
    </message>
    <message>
        <source>Top-k:</source>
        <translation>Top-k：</translation>
    </message>
    <message>
        <source>Seed:</source>
        <translation>种子：</translation>
    </message>
    <message>
        <source>Continue</source>
        <translation>续写</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>The model&apos;s own positions</source>
        <translation>模型自身的位置</translation>
    </message>
    <message>
        <source>Under the method</source>
        <translation>在该方法下</translation>
    </message>
    <message>
        <source>The continuation appears here, token by token: press Continue.</source>
        <translation>续写会逐个词元显示在这里：请按“续写”。</translation>
    </message>
    <message>
        <source>Waiting for the first continuation…</source>
        <translation>等待第一段续写完成…</translation>
    </message>
    <message>
        <source>Continuing…</source>
        <translation>正在续写…</translation>
    </message>
    <message>
        <source>Done in %1 s.</source>
        <translation>用时 %1 秒完成。</translation>
    </message>
    <message>
        <source>Under %1</source>
        <translation>在 %1 下</translation>
    </message>
    <message numerus="yes">
        <source>Stopped after %n byte(s): %1</source>
        <translation>
            <numerusform>在 %n 个字节后停止：%1</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Stopped after %n token(s): %1</source>
        <translation>
            <numerusform>在 %n 个词元后停止：%1</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n new byte(s) after %1 of the prompt · prefill %2 ms · %3 bytes/s</source>
        <translation>
            <numerusform>提示 %1 个字节之后的 %n 个新字节 · 预填充 %2 毫秒 · 每秒 %3 字节</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n new token(s) after %1 of the prompt · prefill %2 ms · %3 tokens/s</source>
        <translation>
            <numerusform>提示 %1 个词元之后的 %n 个新词元 · 预填充 %2 毫秒 · 每秒 %3 词元</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n new byte(s)…</source>
        <translation>
            <numerusform>%n 个新字节…</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n new token(s)…</source>
        <translation>
            <numerusform>%n 个新词元…</numerusform>
        </translation>
    </message>
    <message>
        <source>Train or load a model in the Train tab first.</source>
        <translation>请先在“训练”标签页中训练或加载一个模型。</translation>
    </message>
    <message>
        <source>Open a model folder first.</source>
        <translation>请先打开一个模型文件夹。</translation>
    </message>
    <message>
        <source>%1 bytes; the model&apos;s context is %2.</source>
        <translation>%1 个字节；模型的上下文为 %2。</translation>
    </message>
    <message>
        <source>%1 tokens; the model&apos;s context is %2.</source>
        <translation>%1 个词元；模型的上下文为 %2。</translation>
    </message>
    <message>
        <source>Past the context.</source>
        <translation>已超出上下文。</translation>
    </message>
    <message>
        <source>no parameters</source>
        <translation>无参数</translation>
    </message>
    <message>
        <source>NAME=VALUE, separated by commas, on top of core&apos;s defaults for the prompt and its continuation (the factor: their length over the context; a folder&apos;s own method: its config&apos;s values).</source>
        <translation>NAME=VALUE，以逗号分隔，叠加在 core 为提示及其续写给出的默认值之上（factor：二者总长度除以上下文；文件夹自带的方法：其 config 中的值）。</translation>
    </message>
</context>
<context>
    <name>plab::ui::DotView</name>
    <message>
        <source>Sinusoidal dot</source>
        <translation>正弦点积</translation>
    </message>
    <message>
        <source>&lt;b&gt;Curves&lt;/b&gt; (dim, base)</source>
        <translation>&lt;b&gt;曲线&lt;/b&gt;（维度，底数）</translation>
    </message>
    <message>
        <source>dim d</source>
        <translation>维度 d</translation>
    </message>
    <message>
        <source>base</source>
        <translation>底数</translation>
    </message>
    <message>
        <source>Each row is one curve: dim even in [2, 4096], base &gt; 1</source>
        <translation>每行是一条曲线：维度为 [2, 4096] 中的偶数，底数 &gt; 1</translation>
    </message>
    <message>
        <source>Add</source>
        <translation>添加</translation>
    </message>
    <message>
        <source>Remove</source>
        <translation>删除</translation>
    </message>
    <message>
        <source>Largest distance</source>
        <translation>最大距离</translation>
    </message>
    <message>
        <source>logarithmic distance axis</source>
        <translation>对数距离轴</translation>
    </message>
    <message>
        <source>dot(p_m, p_n) − d/2 = Σ cos(r w_i) − d/2: zero at r = 0, then an oscillating decay; larger bases decay more slowly.</source>
        <translation>dot(p_m, p_n) − d/2 = Σ cos(r w_i) − d/2：在 r = 0 处为零，随后振荡衰减；底数越大，衰减越慢。</translation>
    </message>
    <message>
        <source>Add a (dim, base) row on the left: its curve dot(p_m, p_n) − d/2 against distance appears here.</source>
        <translation>在左侧添加一行 (dim, base)：它的 dot(p_m, p_n) − d/2 随距离变化的曲线会显示在这里。</translation>
    </message>
</context>
<context>
    <name>plab::ui::EntropyView</name>
    <message>
        <source>Entropy</source>
        <translation>熵</translation>
    </message>
    <message>
        <source>&lt;b&gt;Schemes&lt;/b&gt; (one curve each)</source>
        <translation>&lt;b&gt;方案&lt;/b&gt;（每个一条曲线）</translation>
    </message>
    <message>
        <source>q and k</source>
        <translation>q 和 k</translation>
    </message>
    <message>
        <source>zero (bias alone)</source>
        <translation>零（仅偏置）</translation>
    </message>
    <message>
        <source>random (seeded Gaussian)</source>
        <translation>随机（带种子的高斯分布）</translation>
    </message>
    <message>
        <source>from a trained model</source>
        <translation>取自训练好的模型</translation>
    </message>
    <message>
        <source>layer </source>
        <translation>层 </translation>
    </message>
    <message>
        <source>seed</source>
        <translation>种子</translation>
    </message>
    <message>
        <source>lengths 16 … </source>
        <translation>长度 16 … </translation>
    </message>
    <message>
        <source>entropy of</source>
        <translation>熵的取法</translation>
    </message>
    <message>
        <source>the last query</source>
        <translation>最后一个查询</translation>
    </message>
    <message>
        <source>the mean over queries</source>
        <translation>所有查询的平均</translation>
    </message>
    <message>
        <source>Heads, the shown head, mask, context and logn come from the panel. Rotary schemes with q = k = 0 attend uniformly: their curve is log n.</source>
        <translation>头数、显示的头、掩码、上下文长度和 logn 取自左侧面板。q = k = 0 时，旋转类方案的注意力是均匀的：其曲线就是 log n。</translation>
    </message>
    <message>
        <source>Entropy: tick at least one scheme</source>
        <translation>熵：请至少勾选一个方案</translation>
    </message>
    <message>
        <source>q and k of a trained model reading held-out text: train one here, in the Train tab, or load a checkpoint in Attention on text</source>
        <translation>训练好的模型读取留出文本时的 q 和 k：可在此处或“训练”页训练一个，或在“文本上的注意力”中加载检查点</translation>
    </message>
    <message>
        <source>Tick schemes on the left: the entropy of each scheme&apos;s attention against length appears here, one curve per scheme.</source>
        <translation>在左侧勾选方案：每种方案的注意力熵随长度的变化会显示在这里，每种方案一条曲线。</translation>
    </message>
    <message>
        <source>&quot;q and k from a trained model&quot; needs a trained model. Train a demo model now, train several in the &quot;Train&quot; tab, or load a checkpoint in &quot;Attention on text&quot;.</source>
        <translation>“来自训练好模型的 q 和 k”需要一个训练好的模型。可以现在训练一个演示模型，在“训练”页训练多个，或在“文本上的注意力”中加载检查点。</translation>
    </message>
</context>
<context>
    <name>plab::ui::ExportDialog</name>
    <message>
        <source>Export</source>
        <translation>导出</translation>
    </message>
    <message>
        <source>Browse…</source>
        <translation>浏览…</translation>
    </message>
    <message>
        <source>File</source>
        <translation>文件</translation>
    </message>
    <message>
        <source>Pictures: .png .svg .pdf · data: .csv .json .npy (the extension decides)</source>
        <translation>图片：.png .svg .pdf · 数据：.csv .json .npy（由扩展名决定）</translation>
    </message>
    <message>
        <source>pixels</source>
        <translation>像素</translation>
    </message>
    <message>
        <source>Size</source>
        <translation>尺寸</translation>
    </message>
    <message>
        <source>DPI</source>
        <translation>DPI</translation>
    </message>
    <message>
        <source>dark background</source>
        <translation>深色背景</translation>
    </message>
    <message>
        <source>PNG image (*.png);;SVG vector image (*.svg);;PDF document (*.pdf);;CSV data (*.csv);;JSON data (*.json);;NumPy array (*.npy)</source>
        <translation>PNG 图片 (*.png);;SVG 矢量图 (*.svg);;PDF 文档 (*.pdf);;CSV 数据 (*.csv);;JSON 数据 (*.json);;NumPy 数组 (*.npy)</translation>
    </message>
</context>
<context>
    <name>plab::ui::FrequencyView</name>
    <message>
        <source>Rotary frequencies</source>
        <translation>旋转频率</translation>
    </message>
    <message>
        <source>θ_i and θ&apos;_i of the panel&apos;s rotary scheme under its length-extension method (panel: Length extension), on a log axis. Pairs above the dashed line turn more than once within the training context L (the panel&apos;s context, 16 when none); θ&apos;_i/θ_i shows what a method keeps (1) and what it interpolates (1/s): YaRN&apos;s ramp, Llama 3&apos;s bands. Sequence length n (dynamic NTK) is the panel&apos;s length.</source>
        <translation>面板中旋转方案在其长度扩展方法（面板：长度扩展）下的 θ_i 与 θ&apos;_i，纵轴为对数刻度。虚线以上的频率对在训练上下文长度 L（面板的上下文，未设置时为 16）内转过不止一圈；θ&apos;_i/θ_i 显示方法保留了什么（1）、插值了什么（1/s）：YaRN 的斜坡、Llama 3 的分段。序列长度 n（动态 NTK）取面板的长度。</translation>
    </message>
    <message>
        <source>Choose rope or xpos in the panel: its rotary frequencies appear here.</source>
        <translation>在面板中选择 rope 或 xpos：它的旋转频率会显示在这里。</translation>
    </message>
</context>
<context>
    <name>plab::ui::HeadGrid</name>
    <message>
        <source>One small map per layer and head appears here.</source>
        <translation>每层每头的小图会显示在这里。</translation>
    </message>
    <message>
        <source>Layers down, heads across; click a map to open it.</source>
        <translation>纵向为层，横向为头；点击小图即可打开。</translation>
    </message>
    <message>
        <source>Layers down, heads across; click a map to open it. Each layer&apos;s type: S sliding window, F full, C chunked.</source>
        <translation>纵向为层，横向为头；点击小图打开。每层的类型：S 滑动窗口，F 全注意力，C 分块。</translation>
    </message>
</context>
<context>
    <name>plab::ui::HfEntropyPage</name>
    <message>
        <source>Group the curves by layer type</source>
        <translation>按层类型分组曲线</translation>
    </message>
    <message>
        <source>One curve per layer type (sliding, full, chunked), the mean over its layers, instead of one curve per layer</source>
        <translation>每种层类型（滑动、全注意力、分块）一条曲线，取该类型各层的平均，而不是每层一条曲线</translation>
    </message>
</context>
<context>
    <name>plab::ui::HfModelView</name>
    <message>
        <source>%1 tokens of %2; %3 s.</source>
        <translation>%2 的 %1 个词元；%3 秒。</translation>
    </message>
    <message>
        <source>Left out: %1</source>
        <translation>已略去：%1</translation>
    </message>
    <message>
        <source>query %1 “%2” → key %3 “%4”: %5</source>
        <translation>查询 %1 “%2” → 键 %3 “%4”：%5</translation>
    </message>
    <message>
        <source>No model folder is open. Use File → Open model folder… (or the button on the left) to open a Hugging Face folder with config.json, the weights and tokenizer.json.</source>
        <translation>没有打开模型文件夹。用 文件 → 打开模型文件夹…（或左侧的按钮）打开一个含 config.json、权重和 tokenizer.json 的 Hugging Face 文件夹。</translation>
    </message>
    <message>
        <source>Open model folder…</source>
        <translation>打开模型文件夹…</translation>
    </message>
    <message>
        <source>Summary</source>
        <translation>摘要</translation>
    </message>
    <message>
        <source>Type or paste a text</source>
        <translation>输入或粘贴一段文本</translation>
    </message>
    <message>
        <source>Text:</source>
        <translation>文本：</translation>
    </message>
    <message>
        <source>off</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>Repeat the text&apos;s tokens until this many, to look past the model&apos;s context.</source>
        <translation>把文本的词元重复到这么多个，以观察超出模型上下文的情况。</translation>
    </message>
    <message>
        <source>Repeat to (tokens):</source>
        <translation>重复到（词元）：</translation>
    </message>
    <message>
        <source>Layer:</source>
        <translation>层：</translation>
    </message>
    <message>
        <source>Head:</source>
        <translation>头：</translation>
    </message>
    <message>
        <source>First token in the colour scale</source>
        <translation>第一个词元计入颜色刻度</translation>
    </message>
    <message>
        <source>Off: the first-token (sink) column is left out of the colour scale, so the rest of the map keeps its contrast.</source>
        <translation>关闭时：第一个词元（汇聚点）那一列不计入颜色刻度，热图的其余部分保持对比度。</translation>
    </message>
    <message>
        <source>Layers down, heads across; click a map to open it.</source>
        <translation>纵向为层，横向为头；点击小图即可打开。</translation>
    </message>
    <message>
        <source>Attention on text</source>
        <translation>文本上的注意力</translation>
    </message>
    <message>
        <source>Entropy</source>
        <translation>熵</translation>
    </message>
    <message>
        <source>Sinks</source>
        <translation>汇聚点</translation>
    </message>
    <message>
        <source>Evaluate under methods</source>
        <translation>在各方法下评估</translation>
    </message>
    <message>
        <source>Text file…</source>
        <translation>文本文件…</translation>
    </message>
    <message>
        <source>Text to evaluate on</source>
        <translation>用于评估的文本</translation>
    </message>
    <message>
        <source>Text: the default corpus</source>
        <translation>文本：默认语料</translation>
    </message>
    <message>
        <source>Lengths:</source>
        <translation>长度：</translation>
    </message>
    <message>
        <source>all</source>
        <translation>全部</translation>
    </message>
    <message>
        <source>Tokens per length:</source>
        <translation>每个长度的词元数：</translation>
    </message>
    <message>
        <source>the config&apos;s own scaling</source>
        <translation>config 自带的缩放</translation>
    </message>
    <message>
        <source>Evaluate</source>
        <translation>评估</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Perplexity per token against length, one curve per method, appears here: open a model folder, tick methods and press Evaluate.</source>
        <translation>每个词元的困惑度随长度的变化（每种方法一条曲线）会显示在这里：打开一个模型文件夹，勾选方法并点击“评估”。</translation>
    </message>
    <message>
        <source>Evaluating… %1% · about %2 s left</source>
        <translation>正在评估… %1% · 约剩 %2 秒</translation>
    </message>
    <message>
        <source>Text: %1</source>
        <translation>文本：%1</translation>
    </message>
    <message>
        <source>Lengths: &apos;%1&apos; is not allowed; allowed: whole numbers from 2 to %2, separated by commas</source>
        <translation>长度：不允许“%1”；允许：2 到 %2 之间的整数，用逗号分隔</translation>
    </message>
    <message>
        <source>Evaluating…</source>
        <translation>正在评估…</translation>
    </message>
    <message>
        <source>Opening %1…</source>
        <translation>正在打开 %1…</translation>
    </message>
    <message>
        <source>Open model folder</source>
        <translation>打开模型文件夹</translation>
    </message>
    <message>
        <source>No model folder is open.</source>
        <translation>没有打开模型文件夹。</translation>
    </message>
    <message>
        <source>evaluation length (tokens)</source>
        <translation>评估长度（词元）</translation>
    </message>
    <message>
        <source>perplexity (per token)</source>
        <translation>困惑度（按词元）</translation>
    </message>
    <message>
        <source>Your model</source>
        <translation>你的模型</translation>
    </message>
    <message>
        <source>queries %1–%2 → keys %3–%4: at most %5</source>
        <translation>查询 %1–%2 → 键 %3–%4：最大 %5</translation>
    </message>
    <message>
        <source>Show all tokens</source>
        <translation>显示全部词元</translation>
    </message>
    <message>
        <source>On the map: the wheel zooms about the cursor, a drag pans, a double-click shows every token. Zoomed out, each cell is the largest probability of its block of tokens; zoomed in, one cell per token with the tokens on the axes.</source>
        <translation>在图上：滚轮以光标为中心缩放，拖动平移，双击显示全部词元。缩小时每个单元格是其词元块中的最大概率；放大后每个词元一格，坐标轴上标出词元。</translation>
    </message>
    <message>
        <source>the config&apos;s own</source>
        <translation>config 自带的</translation>
    </message>
    <message>
        <source>Positions:</source>
        <translation>位置编码：</translation>
    </message>
    <message>
        <source>Open a model folder first.</source>
        <translation>请先打开一个模型文件夹。</translation>
    </message>
    <message>
        <source>Positions of the attention, entropy and sinks pages: the config&apos;s own rope scaling, or a length-extension method applied zero-shot (no training), with its parameters below. Methods that remap positions (rerope, self-extend) are on the Evaluate under methods page.</source>
        <translation>注意力、熵和汇聚点页面所用的位置编码：config 自带的 rope 缩放，或零样本（不训练）套用的一种长度扩展方法，其参数在下方。重映射位置的方法（rerope、self-extend）在“在各方法下评估”页面中。</translation>
    </message>
    <message>
        <source>How the model&apos;s matrix products compute, in every page of this tab. Changing it reloads the model in the background and recomputes the page.</source>
        <translation>模型矩阵乘积的计算方式，作用于本标签页的每一页。更改后会在后台重新加载模型并重新计算当前页。</translation>
    </message>
    <message>
        <source>Weights, activations and accumulators in float32: the reference the tests hold to 0.1 %.</source>
        <translation>权重、激活与累加均为 float32：测试以 0.1 % 为界的参考精度。</translation>
    </message>
    <message>
        <source>Weights (half the memory) and each product&apos;s input in BF16, accumulated in float32: about twice as fast; logits within 3 % of the largest float32 logit.</source>
        <translation>权重（内存减半）与每次乘积的输入为 BF16，以 float32 累加：约快一倍；logits 与 float32 的差在最大 float32 logit 的 3 % 以内。</translation>
    </message>
    <message>
        <source>Precision:</source>
        <translation>精度：</translation>
    </message>
    <message>
        <source>Loading %1 in %2…</source>
        <translation>正在以 %2 加载 %1…</translation>
    </message>
    <message>
        <source>keys %1–%2, queries %3–%4</source>
        <translation>键 %1–%2，查询 %3–%4</translation>
    </message>
    <message>
        <source>The saved zoom window (%1) lies past this text&apos;s %2 tokens: every token is shown.</source>
        <translation>保存的缩放窗口（%1）超出本文本的 %2 个词元：改为显示全部词元。</translation>
    </message>
    <message>
        <source>The saved zoom window (%1) reaches past this text&apos;s %2 tokens: it is clipped to them.</source>
        <translation>保存的缩放窗口（%1）越过本文本的 %2 个词元：已裁剪到其范围内。</translation>
    </message>
    <message>
        <source>The session&apos;s precision is not available here (%1); the model computes in float32.</source>
        <translation>会话中的精度在此不可用（%1）；模型改用 float32 计算。</translation>
    </message>
    <message>
        <source>context ÷2 … ×2</source>
        <translation>上下文 ÷2 … ×2</translation>
    </message>
    <message>
        <source>Lengths in tokens, separated by commas; empty: half the model&apos;s context, the context and twice it.</source>
        <translation>以词元计的长度，用逗号分隔；留空：模型上下文的一半、上下文本身和它的两倍。</translation>
    </message>
    <message>
        <source>Estimate: all the text&apos;s tokens at each length; the time depends on the text.</source>
        <translation>估计：每个长度都用文本的全部词元；所需时间取决于文本。</translation>
    </message>
    <message numerus="yes">
        <source>Estimate: about %1 for %n curve(s) on 2 cores (a cost model; a busy machine takes longer).</source>
        <translation>
            <numerusform>估计：2 个核心上 %n 条曲线约需 %1（按成本模型；机器繁忙时更久）。</numerusform>
        </translation>
    </message>
    <message>
        <source>Continue the text</source>
        <translation>续写文本</translation>
    </message>
    <message>
        <source>Retrieval</source>
        <translation>检索</translation>
    </message>
    <message>
        <source>Methods reach:</source>
        <translation>方法作用于：</translation>
    </message>
    <message>
        <source>Reaches:</source>
        <translation>作用于：</translation>
    </message>
</context>
<context>
    <name>plab::ui::LayerTypeFields</name>
    <message>
        <source>off (e.g. sliding,full)</source>
        <translation>关闭（例如 sliding,full）</translation>
    </message>
    <message>
        <source>A comma list of sliding, full and chunked, repeating over the layers: sliding,sliding,sliding,sliding,sliding,full is Gemma 3&apos;s 5:1; empty: no layer types</source>
        <translation>由 sliding、full、chunked 组成的逗号分隔列表，在各层上循环：sliding,sliding,sliding,sliding,sliding,full 即 Gemma 3 的 5:1；留空：不分层类型</translation>
    </message>
    <message>
        <source>default (L/4)</source>
        <translation>默认（L/4）</translation>
    </message>
    <message>
        <source>The sliding layers&apos; window W: query m sees keys m − W &lt; n ≤ m</source>
        <translation>滑动层的窗口 W：查询 m 看到 m − W &lt; n ≤ m 的键</translation>
    </message>
    <message>
        <source>The chunked layers&apos; chunk C: query m sees keys n ≤ m of its own chunk</source>
        <translation>分块层的块大小 C：查询 m 只看到自己所在块中 n ≤ m 的键</translation>
    </message>
    <message>
        <source>the model&apos;s scheme</source>
        <translation>模型自己的方案</translation>
    </message>
    <message>
        <source>The full layers&apos; own scheme: none is RNoPE-SWA (rope and a window on the sliding layers, no positions on the full ones)</source>
        <translation>全局层自己的方案：none 即 RNoPE-SWA（滑动层用 rope 加窗口，全局层不用位置）</translation>
    </message>
    <message>
        <source>e.g. base=1000000</source>
        <translation>例如 base=1000000</translation>
    </message>
    <message>
        <source>NAME=VALUE parameters of the full layers&apos; scheme, separated by spaces: base=1000000 is Gemma 3&apos;s global base</source>
        <translation>全局层方案的 NAME=VALUE 参数，用空格分隔：base=1000000 即 Gemma 3 全局层的底数</translation>
    </message>
    <message>
        <source>Layer types</source>
        <translation>层类型</translation>
    </message>
    <message>
        <source>Window W</source>
        <translation>窗口 W</translation>
    </message>
    <message>
        <source>Chunk C</source>
        <translation>块大小 C</translation>
    </message>
    <message>
        <source>Full layers&apos; scheme</source>
        <translation>全局层的方案</translation>
    </message>
    <message>
        <source>Full layers&apos; settings</source>
        <translation>全局层的参数</translation>
    </message>
</context>
<context>
    <name>plab::ui::LessonsPanel</name>
    <message>
        <source>◀ Back</source>
        <translation>◀ 上一步</translation>
    </message>
    <message>
        <source>Next ▶</source>
        <translation>下一步 ▶</translation>
    </message>
    <message>
        <source>The previous figure of the lesson (Alt+Left)</source>
        <translation>本课的上一幅图（Alt+←）</translation>
    </message>
    <message>
        <source>The next figure, then the next lesson (Alt+Right)</source>
        <translation>下一幅图，最后一幅之后进入下一课（Alt+→）</translation>
    </message>
    <message>
        <source>lesson folder</source>
        <translation>课程文件夹</translation>
    </message>
    <message>
        <source>⚠ %1 (cannot be read)</source>
        <translation>⚠ %1（无法读取）</translation>
    </message>
    <message>
        <source>Not loaded:&lt;br&gt;%1</source>
        <translation>未加载：&lt;br&gt;%1</translation>
    </message>
    <message>
        <source>No lesson to show. Lessons → Open folder… loads a folder of NN-slug.md files.</source>
        <translation>没有可显示的课程。“课程 → 打开文件夹…”可加载一个包含 NN-slug.md 文件的文件夹。</translation>
    </message>
    <message>
        <source>▶ Show me</source>
        <translation>▶ 演示给我看</translation>
    </message>
    <message>
        <source>Set the views to this figure</source>
        <translation>把视图设置成这幅图</translation>
    </message>
    <message>
        <source>Command</source>
        <translation>命令</translation>
    </message>
    <message>
        <source>Copy the command that draws this figure headless:
%1</source>
        <translation>复制在无界面模式下绘制这幅图的命令：
%1</translation>
    </message>
    <message>
        <source>Lesson %1 of %2 · figure %3 of %4</source>
        <translation>第 %1 课（共 %2 课）· 第 %3 幅图（共 %4 幅）</translation>
    </message>
</context>
<context>
    <name>plab::ui::MainWindow</name>
    <message>
        <source>PositionLab</source>
        <translation>PositionLab</translation>
    </message>
    <message>
        <source>Scheme and parameters</source>
        <translation>方案与参数</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Stop the running computation (Esc)</source>
        <translation>停止正在进行的计算（Esc）</translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation>文件(&amp;F)</translation>
    </message>
    <message>
        <source>&amp;Open session…</source>
        <translation>打开会话(&amp;O)…</translation>
    </message>
    <message>
        <source>Open &amp;recent</source>
        <translation>最近打开(&amp;R)</translation>
    </message>
    <message>
        <source>&amp;Save session</source>
        <translation>保存会话(&amp;S)</translation>
    </message>
    <message>
        <source>Save session &amp;as…</source>
        <translation>会话另存为(&amp;A)…</translation>
    </message>
    <message>
        <source>Open &amp;corpus…</source>
        <translation>打开语料(&amp;C)…</translation>
    </message>
    <message>
        <source>Ctrl+Shift+O</source>
        <translation>Ctrl+Shift+O</translation>
    </message>
    <message>
        <source>&amp;Export view…</source>
        <translation>导出视图(&amp;E)…</translation>
    </message>
    <message>
        <source>Ctrl+E</source>
        <translation>Ctrl+E</translation>
    </message>
    <message>
        <source>Copy &amp;image</source>
        <translation>复制图片(&amp;I)</translation>
    </message>
    <message>
        <source>Ctrl+Shift+C</source>
        <translation>Ctrl+Shift+C</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>退出(&amp;Q)</translation>
    </message>
    <message>
        <source>&amp;View</source>
        <translation>视图(&amp;V)</translation>
    </message>
    <message>
        <source>Ctrl+%1</source>
        <translation>Ctrl+%1</translation>
    </message>
    <message>
        <source>Reset &amp;zoom</source>
        <translation>重置缩放(&amp;Z)</translation>
    </message>
    <message>
        <source>Ctrl+0</source>
        <translation>Ctrl+0</translation>
    </message>
    <message>
        <source>&amp;Dark palette</source>
        <translation>深色主题(&amp;D)</translation>
    </message>
    <message>
        <source>Ctrl+Shift+D</source>
        <translation>Ctrl+Shift+D</translation>
    </message>
    <message>
        <source>&amp;Language</source>
        <translation>语言(&amp;L)</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation>帮助(&amp;H)</translation>
    </message>
    <message>
        <source>&amp;Keyboard shortcuts</source>
        <translation>键盘快捷键(&amp;K)</translation>
    </message>
    <message>
        <source>Keyboard shortcuts</source>
        <translation>键盘快捷键</translation>
    </message>
    <message>
        <source>Ctrl+O open session · Ctrl+S save · Ctrl+Shift+S save as
Ctrl+E export view · Ctrl+Shift+C copy image · Ctrl+Shift+O open corpus
Ctrl+1…6 views · Ctrl+0 reset zoom · Ctrl+Shift+D dark palette · Esc cancel job
Heatmaps: wheel zoom, drag pan, double-click whole matrix, hover for (m, n, value)</source>
        <translation>Ctrl+O 打开会话 · Ctrl+S 保存 · Ctrl+Shift+S 另存为
Ctrl+E 导出视图 · Ctrl+Shift+C 复制图片 · Ctrl+Shift+O 打开语料
Ctrl+1…6 切换视图 · Ctrl+0 重置缩放 · Ctrl+Shift+D 深色主题 · Esc 取消任务
热力图：滚轮缩放，拖动平移，双击显示整个矩阵，悬停查看 (m, n, 值)</translation>
    </message>
    <message>
        <source>&amp;About PositionLab</source>
        <translation>关于 PositionLab(&amp;A)</translation>
    </message>
    <message>
        <source>About PositionLab</source>
        <translation>关于 PositionLab</translation>
    </message>
    <message>
        <source>PositionLab 0.1 — positional encodings and length extrapolation in transformers.
Every number shown comes from the core library; positionlab-cli renders the same pictures headless.</source>
        <translation>PositionLab 0.1 —— Transformer 中的位置编码与长度外推。
显示的每个数字都来自核心库；positionlab-cli 可在无界面模式下绘制同样的图片。</translation>
    </message>
    <message>
        <source>Language</source>
        <translation>语言</translation>
    </message>
    <message>
        <source>Changing the language now rebuilds the window. Running computations and the training results shown in &quot;Train&quot; are not kept (the trained models are). Change it now, or at the next start?</source>
        <translation>现在切换语言会重建窗口。正在进行的计算以及“训练”页中显示的训练结果不会保留（训练好的模型会保留）。现在切换，还是下次启动时切换？</translation>
    </message>
    <message>
        <source>Change now</source>
        <translation>现在切换</translation>
    </message>
    <message>
        <source>At the next start</source>
        <translation>下次启动时</translation>
    </message>
    <message>
        <source>The language changes at the next start.</source>
        <translation>语言将在下次启动时切换。</translation>
    </message>
    <message>
        <source>PositionLab — %1</source>
        <translation>PositionLab — %1</translation>
    </message>
    <message numerus="yes">
        <source>Session saved. %n model(s) trained here are not in it: save them with Save model… in Attention on text, then save the session again.</source>
        <translation>
            <numerusform>会话已保存。在此训练的 %n 个模型不在其中：请在“文本上的注意力”中用“保存模型…”保存它们，然后再次保存会话。</numerusform>
        </translation>
    </message>
    <message>
        <source>Open session</source>
        <translation>打开会话</translation>
    </message>
    <message>
        <source>%1: cannot open as a corpus (%2)</source>
        <translation>%1：无法作为语料打开（%2）</translation>
    </message>
    <message>
        <source>%1: the corpus is empty</source>
        <translation>%1：语料为空</translation>
    </message>
    <message>
        <source>%1: not UTF-8 text; a corpus must be a UTF-8 text file</source>
        <translation>%1：不是 UTF-8 文本；语料必须是 UTF-8 文本文件</translation>
    </message>
    <message>
        <source>Corpus: %1</source>
        <translation>语料：%1</translation>
    </message>
    <message>
        <source>this view has nothing to export yet (it needs a trained model)</source>
        <translation>此视图还没有可导出的内容（需要一个训练好的模型）</translation>
    </message>
    <message>
        <source>this view has nothing to export yet</source>
        <translation>此视图还没有可导出的内容</translation>
    </message>
    <message>
        <source>%1: unknown extension; allowed: .png .svg .pdf .csv .json .npy</source>
        <translation>%1：未知的扩展名；允许：.png .svg .pdf .csv .json .npy</translation>
    </message>
    <message>
        <source>Exported %1</source>
        <translation>已导出 %1</translation>
    </message>
    <message>
        <source>Export</source>
        <translation>导出</translation>
    </message>
    <message>
        <source>This view has nothing to export yet.</source>
        <translation>此视图还没有可导出的内容。</translation>
    </message>
    <message>
        <source>Nothing to copy in this view</source>
        <translation>此视图中没有可复制的内容</translation>
    </message>
    <message>
        <source>Image copied to the clipboard</source>
        <translation>图片已复制到剪贴板</translation>
    </message>
    <message>
        <source>PositionLab session (*.json)</source>
        <translation>PositionLab 会话 (*.json)</translation>
    </message>
    <message>
        <source>Save session</source>
        <translation>保存会话</translation>
    </message>
    <message>
        <source>Open corpus</source>
        <translation>打开语料</translation>
    </message>
    <message>
        <source>Text (*.txt);;All files (*)</source>
        <translation>文本 (*.txt);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Drop</source>
        <translation>拖放</translation>
    </message>
    <message>
        <source>Lessons</source>
        <translation>课程</translation>
    </message>
    <message>
        <source>&amp;Lessons</source>
        <translation>课程(&amp;L)</translation>
    </message>
    <message>
        <source>Show &amp;lessons</source>
        <translation>显示课程(&amp;L)</translation>
    </message>
    <message>
        <source>Ctrl+L</source>
        <translation>Ctrl+L</translation>
    </message>
    <message>
        <source>&amp;Next figure</source>
        <translation>下一幅图(&amp;N)</translation>
    </message>
    <message>
        <source>&amp;Previous figure</source>
        <translation>上一幅图(&amp;P)</translation>
    </message>
    <message>
        <source>&amp;Open folder…</source>
        <translation>打开文件夹(&amp;O)…</translation>
    </message>
    <message>
        <source>Open a folder of lessons</source>
        <translation>打开课程文件夹</translation>
    </message>
    <message>
        <source>Open lessons</source>
        <translation>打开课程</translation>
    </message>
    <message>
        <source>&amp;Built-in lessons</source>
        <translation>内置课程(&amp;B)</translation>
    </message>
    <message>
        <source>This figure cannot be shown: %1</source>
        <translation>无法显示这幅图：%1</translation>
    </message>
    <message>
        <source>Demo model: %1</source>
        <translation>演示模型：%1</translation>
    </message>
    <message>
        <source>Kept models not loaded: %1</source>
        <translation>未能加载已保存的模型：%1</translation>
    </message>
    <message>
        <source>Training a %1 model for this figure (%2 preset); it appears here when done</source>
        <translation>正在为这幅图训练一个 %1 模型（%2 预设）；完成后会显示在这里</translation>
    </message>
    <message>
        <source>A demo model is training already</source>
        <translation>已有一个演示模型正在训练</translation>
    </message>
    <message>
        <source>The model is not kept for the next start: %1</source>
        <translation>该模型未能保存到下次启动：%1</translation>
    </message>
    <message>
        <source>Open s&amp;weep results…</source>
        <translation>打开扫描结果(&amp;W)…</translation>
    </message>
    <message>
        <source>Open sweep results</source>
        <translation>打开扫描结果</translation>
    </message>
    <message>
        <source>The Train tab is training; cancel it first.</source>
        <translation>训练页正在训练；请先取消。</translation>
    </message>
    <message>
        <source>Show &amp;scheme panel</source>
        <translation>显示方案面板(&amp;S)</translation>
    </message>
    <message>
        <source>Ctrl+Shift+P</source>
        <translation>Ctrl+Shift+P</translation>
    </message>
    <message>
        <source>Open &amp;model folder…</source>
        <translation>打开模型文件夹(&amp;M)…</translation>
    </message>
</context>
<context>
    <name>plab::ui::MethodsPanel</name>
    <message>
        <source>&lt;b&gt;Model&lt;/b&gt; (rope or xpos)</source>
        <translation>&lt;b&gt;模型&lt;/b&gt;（rope 或 xpos）</translation>
    </message>
    <message>
        <source>&lt;b&gt;Methods&lt;/b&gt; (double-click a value to edit it)</source>
        <translation>&lt;b&gt;方法&lt;/b&gt;（双击数值可编辑）</translation>
    </message>
    <message>
        <source>method / parameter</source>
        <translation>方法 / 参数</translation>
    </message>
    <message>
        <source>value</source>
        <translation>值</translation>
    </message>
    <message>
        <source>%1; allowed: %2</source>
        <translation>%1；允许：%2</translation>
    </message>
    <message>
        <source>Evaluate under methods</source>
        <translation>在各方法下评估</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Defaults</source>
        <translation>默认值</translation>
    </message>
    <message>
        <source>factor = longest length / L (dynamic-ntk keeps 1), window = L/2, the rest as in the catalogue</source>
        <translation>factor = 最长长度 / L（dynamic-ntk 保持 1），window = L/2，其余取目录中的默认值</translation>
    </message>
    <message>
        <source>Tick methods and press &quot;Evaluate under methods&quot;: the model is scored zero-shot under each, one curve per method.</source>
        <translation>勾选方法并点击“在各方法下评估”：模型在每种方法下零样本评分，每种方法一条曲线。</translation>
    </message>
    <message>
        <source>%1 is not a rotary model (its scheme is %2): length-extension methods apply to rope and xpos only.</source>
        <translation>%1 不是旋转位置编码模型（其方案为 %2）：长度扩展方法只适用于 rope 和 xpos。</translation>
    </message>
    <message>
        <source>Tick at least one method.</source>
        <translation>请至少勾选一种方法。</translation>
    </message>
    <message>
        <source>Evaluating %1 under %2 method(s)…</source>
        <translation>正在 %2 种方法下评估 %1…</translation>
    </message>
    <message>
        <source>Done: %1 under %2 method(s).</source>
        <translation>完成：%1，%2 种方法。</translation>
    </message>
    <message>
        <source>No model yet: train rope or xpos on the &quot;Training runs&quot; page or load a checkpoint in &quot;Attention on text&quot;.</source>
        <translation>尚无模型：在“训练运行”页训练 rope 或 xpos，或在“文本上的注意力”中加载检查点。</translation>
    </message>
    <message>
        <source>Scores held-out text at %1 under each ticked method (eval bytes, evaluation mode and corpus as on the &quot;Training runs&quot; page).</source>
        <translation>在每种勾选的方法下，于 %1 上对留出文本评分（评估字节数、评估方式和语料与“训练运行”页相同）。</translation>
    </message>
</context>
<context>
    <name>plab::ui::ModelPrompt</name>
    <message>
        <source>Train a demo model now</source>
        <translation>现在训练一个演示模型</translation>
    </message>
    <message>
        <source>Trains one %1 model with the &quot;%2&quot; preset in the background. It is kept, so it is here again at the next start.</source>
        <translation>在后台用“%2”预设训练一个 %1 模型。模型会被保存，下次启动时仍然可用。</translation>
    </message>
    <message>
        <source>Starting…</source>
        <translation>正在开始…</translation>
    </message>
    <message>
        <source>%1: trained and evaluated</source>
        <translation>%1：已训练并评估</translation>
    </message>
    <message>
        <source>%1: evaluating…</source>
        <translation>%1：正在评估…</translation>
    </message>
    <message>
        <source>%1: step %2 of %3, loss %4</source>
        <translation>%1：第 %2 步（共 %3 步），损失 %4</translation>
    </message>
</context>
<context>
    <name>plab::ui::RetrievalPage</name>
    <message>
        <source>Scoring… %1% · about %2 left</source>
        <translation>评分中… %1% · 约剩 %2</translation>
    </message>
    <message>
        <source>passkey: a 5-digit number in filler; niah: special magic numbers for a key (one, among other keys, or all four of a key); variable-tracking: the value at the end of a chain.</source>
        <translation>passkey：藏在填充文本中的 5 位数字；niah：某个键的特殊魔法数字（一个、混在其他键之中，或该键的全部四个）；variable-tracking：赋值链末端的值。</translation>
    </message>
    <message>
        <source>Task:</source>
        <translation>任务：</translation>
    </message>
    <message>
        <source>default</source>
        <translation>默认</translation>
    </message>
    <message>
        <source>Prompt lengths in tokens, exact, separated by commas; empty: up to 5/4 of the context, as many as fit about 5 minutes.</source>
        <translation>提示长度（词元数，精确），用逗号分隔；留空：最长到上下文的 5/4，取约 5 分钟内能完成的若干长度。</translation>
    </message>
    <message>
        <source>Lengths:</source>
        <translation>长度：</translation>
    </message>
    <message>
        <source>Needle depths from 0 (the haystack&apos;s start) to 1 (its end), separated by commas.</source>
        <translation>针的深度，从 0（干草堆开头）到 1（结尾），用逗号分隔。</translation>
    </message>
    <message>
        <source>Depths:</source>
        <translation>深度：</translation>
    </message>
    <message>
        <source>Examples per cell:</source>
        <translation>每格样例数：</translation>
    </message>
    <message>
        <source>Methods:</source>
        <translation>方法：</translation>
    </message>
    <message>
        <source>Run</source>
        <translation>运行</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Accuracy by needle depth and length, one heatmap per method, appears here as the cells finish: open a model folder, choose a task and press Run.</source>
        <translation>按针的深度和长度的准确率（每种方法一幅热图）会随各格完成显示在这里：打开一个模型文件夹，选择任务并点击运行。</translation>
    </message>
    <message>
        <source>Open a model folder first.</source>
        <translation>请先打开一个模型文件夹。</translation>
    </message>
    <message>
        <source>Lengths: &apos;%1&apos; is not allowed; allowed: whole numbers from 1 to %2, separated by commas</source>
        <translation>长度：不允许“%1”；允许：1 到 %2 之间的整数，用逗号分隔</translation>
    </message>
    <message>
        <source>Depths: &apos;%1&apos; is not allowed; allowed: numbers from 0 to 1, separated by commas</source>
        <translation>深度：不允许“%1”；允许：0 到 1 之间的数，用逗号分隔</translation>
    </message>
    <message>
        <source>Methods: none ticked; tick at least one.</source>
        <translation>方法：没有勾选任何方法；请至少勾选一种。</translation>
    </message>
    <message>
        <source>%1 method(s) × lengths %2 × %3 depth(s) × %4 example(s). Estimate: about %5 on 2 cores (a cost model; a busy machine takes longer).</source>
        <translation>%1 种方法 × 长度 %2 × %3 个深度 × %4 个样例。估计：2 个核心上约需 %5（按成本模型；机器繁忙时更久）。</translation>
    </message>
    <message>
        <source>Scoring…</source>
        <translation>评分中…</translation>
    </message>
    <message>
        <source>%1 of %2 answers right; %3 s.</source>
        <translation>%2 个答案中答对 %1 个；%3 秒。</translation>
    </message>
    <message>
        <source>Methods reach:</source>
        <translation>方法作用于：</translation>
    </message>
</context>
<context>
    <name>plab::ui::ScalingLayersCombo</name>
    <message>
        <source>full layers</source>
        <translation>全注意力层</translation>
    </message>
    <message>
        <source>sliding layers</source>
        <translation>滑动窗口层</translation>
    </message>
    <message>
        <source>all layers</source>
        <translation>所有层</translation>
    </message>
    <message>
        <source>The layer types a method applied zero-shot reaches: full layers (the default, where Gemma 3&apos;s own scaling lives), sliding and chunked layers (a window spanning the context counts as full), or all; the other layers keep the config&apos;s own rope.</source>
        <translation>零样本施加的方法作用的层类型：全注意力层（默认，Gemma 3 自带的缩放就在这些层上）、滑动窗口层和分块层（窗口覆盖整个上下文的层算作全注意力层），或所有层；其余层保持配置自带的旋转编码。</translation>
    </message>
</context>
<context>
    <name>plab::ui::SchemePanel</name>
    <message>
        <source>%1
allowed: %2</source>
        <translation>%1
允许范围：%2</translation>
    </message>
    <message>
        <source>&lt;b&gt;Scheme&lt;/b&gt;</source>
        <translation>&lt;b&gt;方案&lt;/b&gt;</translation>
    </message>
    <message>
        <source>Attention</source>
        <translation>注意力</translation>
    </message>
    <message>
        <source>causal</source>
        <translation>因果</translation>
    </message>
    <message>
        <source>bidirectional</source>
        <translation>双向</translation>
    </message>
    <message>
        <source>Mask</source>
        <translation>掩码</translation>
    </message>
    <message>
        <source>Heads H</source>
        <translation>头数 H</translation>
    </message>
    <message>
        <source>Head shown in the views (1..H)</source>
        <translation>视图中显示的头（1..H）</translation>
    </message>
    <message>
        <source>Show head</source>
        <translation>显示的头</translation>
    </message>
    <message>
        <source>Sequence length N (1..%1)</source>
        <translation>序列长度 N（1..%1）</translation>
    </message>
    <message>
        <source>Length N</source>
        <translation>长度 N</translation>
    </message>
    <message>
        <source>logn past L =</source>
        <translation>超过 L 时用 logn，L =</translation>
    </message>
    <message>
        <source>Scale row m&apos;s scores by log(m+1)/log(L) when m+1 &gt; L (entropy invariance)</source>
        <translation>当 m+1 &gt; L 时，将第 m 行的分数乘以 log(m+1)/log(L)（熵不变性）</translation>
    </message>
    <message>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <source>Training context L: the logn threshold and the default window of local/bca</source>
        <translation>训练上下文长度 L：logn 的阈值，也是 local/bca 的默认窗口</translation>
    </message>
    <message>
        <source>Context</source>
        <translation>上下文</translation>
    </message>
    <message>
        <source>auto (diverging for signed data)</source>
        <translation>自动（有符号数据用发散色标）</translation>
    </message>
    <message>
        <source>Colour map</source>
        <translation>颜色映射</translation>
    </message>
    <message>
        <source>Parameters</source>
        <translation>参数</translation>
    </message>
    <message>
        <source>&lt;b&gt;Formula&lt;/b&gt;</source>
        <translation>&lt;b&gt;公式&lt;/b&gt;</translation>
    </message>
    <message>
        <source>(no parameters)</source>
        <translation>（无参数）</translation>
    </message>
    <message>
        <source>Parameters of %1</source>
        <translation>%1 的参数</translation>
    </message>
    <message>
        <source>logn needs a training context L &gt;= 2 (the threshold of log(m+1)/log(L))</source>
        <translation>logn 需要训练上下文长度 L &gt;= 2（log(m+1)/log(L) 的阈值）</translation>
    </message>
    <message>
        <source>Rotary length extension (rope, xpos): scaled frequencies, logit scale or remapped positions; L is the context above (16 when none)</source>
        <translation>旋转位置的长度扩展（rope、xpos）：缩放频率、logit 缩放或重映射位置；L 为上面的上下文（未设置时为 16）</translation>
    </message>
    <message>
        <source>Length extension</source>
        <translation>长度扩展</translation>
    </message>
    <message>
        <source>&lt;i&gt;%1&lt;/i&gt;</source>
        <translation>&lt;i&gt;%1&lt;/i&gt;</translation>
    </message>
    <message>
        <source>auto</source>
        <translation>自动</translation>
    </message>
    <message>
        <source>Colour map of the heatmaps; auto: diverging when the data has both signs, else viridis</source>
        <translation>热图的颜色映射；自动：数据有正有负时用发散色标，否则用 viridis</translation>
    </message>
    <message>
        <source>Layer type</source>
        <translation>层类型</translation>
    </message>
    <message>
        <source>off</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>Sliding window W: query m sees keys m - W &lt; n &lt;= m (Mistral, Gemma); off: every key before it. Causal only; local and bca have their own window</source>
        <translation>滑动窗口 W：查询 m 只看到键 m - W &lt; n &lt;= m（Mistral、Gemma）；关闭：看到它之前的所有键。仅限因果；local 和 bca 有自己的窗口</translation>
    </message>
    <message>
        <source>Chunked attention C (Llama 4): query m sees the keys n &lt;= m of its own chunk, ⌊n/C⌋ = ⌊m/C⌋. Causal only</source>
        <translation>分块注意力 C（Llama 4）：查询 m 只看到自己块内的键 n &lt;= m，⌊n/C⌋ = ⌊m/C⌋。仅限因果</translation>
    </message>
    <message>
        <source>Attention sinks beside a window or chunk: keys n &lt; S stay visible</source>
        <translation>窗口或分块之外的注意力汇聚点：键 n &lt; S 始终可见</translation>
    </message>
    <message>
        <source>Soft cap c (Gemma 2): every score s becomes c tanh(s/c), after the bias and scale, before the softmax</source>
        <translation>软上限 c（Gemma 2）：每个分数 s 变为 c tanh(s/c)，在偏置和缩放之后、softmax 之前</translation>
    </message>
    <message>
        <source>Window</source>
        <translation>窗口</translation>
    </message>
    <message>
        <source>Chunk</source>
        <translation>分块</translation>
    </message>
    <message>
        <source>Sinks</source>
        <translation>汇聚点</translation>
    </message>
    <message>
        <source>Soft cap</source>
        <translation>软上限</translation>
    </message>
</context>
<context>
    <name>plab::ui::ThumbnailStrip</name>
    <message>
        <source>One thumbnail per head: click to show that head</source>
        <translation>每个头一张缩略图：点击即显示该头</translation>
    </message>
    <message>
        <source>head %1</source>
        <translation>第 %1 个头</translation>
    </message>
</context>
<context>
    <name>plab::ui::TrainView</name>
    <message>
        <source>&lt;b&gt;Schemes&lt;/b&gt; to train</source>
        <translation>要训练的&lt;b&gt;方案&lt;/b&gt;</translation>
    </message>
    <message>
        <source>Steps</source>
        <translation>步数</translation>
    </message>
    <message>
        <source>non-overlapping</source>
        <translation>不重叠</translation>
    </message>
    <message>
        <source>sliding window</source>
        <translation>滑动窗口</translation>
    </message>
    <message>
        <source>Evaluation</source>
        <translation>评估</translation>
    </message>
    <message>
        <source>all</source>
        <translation>全部</translation>
    </message>
    <message>
        <source>Eval bytes</source>
        <translation>评估字节数</translation>
    </message>
    <message>
        <source>Train</source>
        <translation>训练</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Trains each scheme at context L, then scores held-out text at %1.</source>
        <translation>在上下文长度 L 上训练每个方案，然后在 %1 上对留出文本评分。</translation>
    </message>
    <message>
        <source>Corpus: fortunes (default; drop a text file on the window to change)</source>
        <translation>语料：fortunes（默认；把文本文件拖到窗口上即可更换）</translation>
    </message>
    <message>
        <source>Corpus: %1</source>
        <translation>语料：%1</translation>
    </message>
    <message>
        <source>Train: tick at least one scheme</source>
        <translation>训练：请至少勾选一个方案</translation>
    </message>
    <message>
        <source>Training %1 scheme(s)…</source>
        <translation>正在训练 %1 个方案…</translation>
    </message>
    <message>
        <source>%1: step %2 of %3, loss %4</source>
        <translation>%1：第 %2 步（共 %3 步），损失 %4</translation>
    </message>
    <message>
        <source>Done.</source>
        <translation>完成。</translation>
    </message>
    <message>
        <source>canceled</source>
        <translation>已取消</translation>
    </message>
    <message>
        <source>scheme</source>
        <translation>方案</translation>
    </message>
    <message>
        <source>ppl @ %1</source>
        <translation>困惑度 @ %1</translation>
    </message>
    <message>
        <source>unsupported</source>
        <translation>不支持</translation>
    </message>
    <message>
        <source>custom</source>
        <translation>自定义</translation>
    </message>
    <message>
        <source>Values edited by hand; choose a preset to restore its values</source>
        <translation>数值已手动修改；选择一个预设可恢复其数值</translation>
    </message>
    <message>
        <source>Preset</source>
        <translation>预设</translation>
    </message>
    <message>
        <source>Optimiser steps per scheme</source>
        <translation>每种方案的优化步数</translation>
    </message>
    <message>
        <source>Peak learning rate after the warm-up (cosine decay afterwards)</source>
        <translation>预热后的峰值学习率（之后余弦衰减）</translation>
    </message>
    <message>
        <source>Learning rate</source>
        <translation>学习率</translation>
    </message>
    <message>
        <source>Context L</source>
        <translation>上下文长度 L</translation>
    </message>
    <message>
        <source>Training context in bytes; evaluation runs at %1</source>
        <translation>训练上下文长度（字节）；评估在 %1 上进行</translation>
    </message>
    <message>
        <source>Layers</source>
        <translation>层数</translation>
    </message>
    <message>
        <source>Transformer layers</source>
        <translation>Transformer 层数</translation>
    </message>
    <message>
        <source>d_model</source>
        <translation>d_model</translation>
    </message>
    <message>
        <source>Width of the model (a multiple of the heads)</source>
        <translation>模型宽度（须为头数的倍数）</translation>
    </message>
    <message>
        <source>Heads</source>
        <translation>头数</translation>
    </message>
    <message>
        <source>Attention heads (d_model must divide by them)</source>
        <translation>注意力头数（d_model 须能被它整除）</translation>
    </message>
    <message>
        <source>d_ff</source>
        <translation>d_ff</translation>
    </message>
    <message>
        <source>Width of each MLP&apos;s hidden layer</source>
        <translation>每个 MLP 隐藏层的宽度</translation>
    </message>
    <message>
        <source>Batch</source>
        <translation>批大小</translation>
    </message>
    <message>
        <source>Sequences of L bytes per step</source>
        <translation>每步的序列数（每条 L 字节）</translation>
    </message>
    <message>
        <source>Held-out bytes scored per length (the last 10% of the corpus); 0: all</source>
        <translation>每个长度上评分的留出字节数（语料的最后 10%）；0 表示全部</translation>
    </message>
    <message>
        <source>Press Train to train the ticked schemes: each one&apos;s training loss appears here as it trains.</source>
        <translation>按“训练”开始训练勾选的方案：每种方案的训练损失会在训练过程中显示在这里。</translation>
    </message>
    <message>
        <source>Press Train to train the ticked schemes; each curve appears when its model is evaluated.</source>
        <translation>按“训练”开始训练勾选的方案；每个模型评估完成后，它的曲线就会出现。</translation>
    </message>
    <message>
        <source>Runs per scheme with seeds 1, 2, …: with more than one, each scheme shows its mean curve with a ± sd band and the table mean ± sd</source>
        <translation>每种方案用种子 1, 2, … 各训练一次：多于一个种子时，每种方案显示均值曲线及 ± 标准差带，表格显示均值 ± 标准差</translation>
    </message>
    <message>
        <source>Seeds</source>
        <translation>种子数</translation>
    </message>
    <message>
        <source>Training %1 scheme(s) × %2 seeds…</source>
        <translation>正在训练 %1 种方案 × %2 个种子…</translation>
    </message>
    <message>
        <source>%1, seed %2</source>
        <translation>%1，种子 %2</translation>
    </message>
    <message>
        <source>Sweep results from %1: a sweep folder keeps perplexities, not training curves.</source>
        <translation>来自 %1 的扫描结果：扫描文件夹只保存困惑度，不保存训练曲线。</translation>
    </message>
    <message>
        <source>Training loss</source>
        <translation>训练损失</translation>
    </message>
    <message>
        <source>Sweep results from %1: %2 finished cells.</source>
        <translation>来自 %1 的扫描结果：已完成 %2 个单元。</translation>
    </message>
    <message>
        <source>%1 ± %2</source>
        <translation>%1 ± %2</translation>
    </message>
    <message>
        <source>n = %1 seeds, min %2, max %3; ppl / ppl(L) = %4 ± %5</source>
        <translation>n = %1 个种子，最小 %2，最大 %3；ppl / ppl(L) = %4 ± %5</translation>
    </message>
    <message>
        <source>Training runs</source>
        <translation>训练运行</translation>
    </message>
    <message>
        <source>Evaluate under methods</source>
        <translation>在各方法下评估</translation>
    </message>
    <message>
        <source>A trained rope or xpos model scored zero-shot under length-extension methods: one perplexity curve per method</source>
        <translation>训练好的 rope 或 xpos 模型在长度扩展方法下零样本评分：每种方法一条困惑度曲线</translation>
    </message>
    <message>
        <source>ppl
@ %1</source>
        <translation>困惑度
@ %1</translation>
    </message>
    <message>
        <source>%1: depth %2, length %3: accuracy %4</source>
        <translation>%1：深度 %2，长度 %3：准确率 %4</translation>
    </message>
    <message>
        <source>%1: depth %2, length %3: not scored</source>
        <translation>%1：深度 %2，长度 %3：未评估</translation>
    </message>
    <message>
        <source>Run the DroPE recipe</source>
        <translation>运行 DroPE 流程</translation>
    </message>
    <message>
        <source>On the chosen task: train rope, drop the positions, recalibrate for the chosen share of the steps, then score it beside rope, rope + YaRN zero-shot and NoPE</source>
        <translation>在所选任务上：训练 rope，去掉位置，按所选的步数比例重新校准，然后与 rope、零样本的 rope + YaRN 和 NoPE 一起评估</translation>
    </message>
    <message>
        <source>text perplexity</source>
        <translation>文本困惑度</translation>
    </message>
    <message>
        <source>Train on the corpus, score perplexity against length</source>
        <translation>在语料上训练，按长度评估困惑度</translation>
    </message>
    <message>
        <source>What the schemes learn: text (perplexity) or a task scored by exact-match accuracy at lengths L to 4L</source>
        <translation>方案要学的内容：文本（困惑度），或在长度 L 到 4L 上按完全匹配准确率评分的任务</translation>
    </message>
    <message>
        <source>Task</source>
        <translation>任务</translation>
    </message>
    <message>
        <source>Training examples have lengths 1..L (at most what the context holds); scored at L to 4L</source>
        <translation>训练样例的长度为 1..L（不超过上下文能容纳的长度）；在 L 到 4L 上评分</translation>
    </message>
    <message>
        <source>Task length L</source>
        <translation>任务长度 L</translation>
    </message>
    <message>
        <source>DroPE&apos;s recalibration: steps after dropping the positions, as a share of the rope run&apos;s (the paper uses 0.5-12.5%)</source>
        <translation>DroPE 的重新校准：去掉位置之后的步数，占 rope 训练步数的比例（论文用 0.5-12.5%）</translation>
    </message>
    <message>
        <source>Recalibration</source>
        <translation>重新校准</translation>
    </message>
    <message>
        <source>DroPE is scored with its logits times 1 + c·ln(n/L) past L; 0: unscaled</source>
        <translation>评估 DroPE 时，超过 L 的 logits 乘以 1 + c·ln(n/L)；0：不缩放</translation>
    </message>
    <message>
        <source>DroPE logit-c</source>
        <translation>DroPE logit-c</translation>
    </message>
    <message>
        <source>Passkey accuracy by needle depth and length appears here as each model is scored.</source>
        <translation>每个模型评估完后，这里显示按针的深度和长度的 passkey 准确率。</translation>
    </message>
    <message>
        <source>choose a task (copy, reverse, addition or passkey) for the DroPE recipe</source>
        <translation>DroPE 流程需要选择一个任务（copy、reverse、addition 或 passkey）</translation>
    </message>
    <message>
        <source>Each curve appears when its model is scored on the task.</source>
        <translation>每条曲线在其模型完成任务评估后出现。</translation>
    </message>
    <message>
        <source>DroPE recipe on task %1…</source>
        <translation>在任务 %1 上运行 DroPE 流程…</translation>
    </message>
    <message>
        <source>Training %1 scheme(s) on task %2…</source>
        <translation>在任务 %2 上训练 %1 个方案…</translation>
    </message>
    <message>
        <source>%1 — step %2 of %3, loss %4</source>
        <translation>%1 — 第 %2/%3 步，损失 %4</translation>
    </message>
    <message>
        <source>model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>acc @ %1</source>
        <translation>准确率 @ %1</translation>
    </message>
    <message>
        <source>n = %1 seeds, min %2, max %3</source>
        <translation>n = %1 个种子，最小 %2，最大 %3</translation>
    </message>
    <message>
        <source>NoPE every</source>
        <translation>NoPE 间隔</translation>
    </message>
    <message>
        <source>K ≥ 2: layers K, 2K, 3K, … (counted from 1) use no positional encoding and the others the ticked rotary scheme, as SmolLM3 and Llama 4 do; off: every layer uses it</source>
        <translation>K ≥ 2：第 K、2K、3K、… 层（从 1 数起）不用位置编码，其余层用勾选的旋转方案，与 SmolLM3 和 Llama 4 相同；关闭：每一层都用该方案</translation>
    </message>
    <message>
        <source>off</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>Llama 4 temperature on NoPE layers</source>
        <translation>NoPE 层上的 Llama 4 温度</translation>
    </message>
    <message>
        <source>attn_temperature_tuning: the query at position p times 1 + β·ln(1 + ⌊(p + 1)/F⌋) on the NoPE layers only</source>
        <translation>attn_temperature_tuning：仅在 NoPE 层上，把位置 p 处的查询乘以 1 + β·ln(1 + ⌊(p + 1)/F⌋)</translation>
    </message>
    <message>
        <source>floor_scale F</source>
        <translation>floor_scale F</translation>
    </message>
    <message>
        <source>The temperature grows one step every F positions; Llama 4&apos;s 8192 never acts at the lab&apos;s short contexts: set F near L to see it</source>
        <translation>温度每隔 F 个位置增长一级；Llama 4 的 8192 在实验室的短上下文中不会起作用：把 F 设成接近 L 才能看到效果</translation>
    </message>
    <message>
        <source>attn_scale β</source>
        <translation>attn_scale β</translation>
    </message>
    <message>
        <source>The size of each step of the temperature</source>
        <translation>温度每一级的大小</translation>
    </message>
    <message>
        <source>SSMax</source>
        <translation>SSMax</translation>
    </message>
    <message>
        <source>Scalable softmax: row m&apos;s scores times s_h·ln n, n the keys it sees, s learned per head (from 1/ln L)</source>
        <translation>可缩放 softmax：第 m 行的分数乘以 s_h·ln n，n 为它看到的键数，s 按头学习（初值 1/ln L）</translation>
    </message>
    <message>
        <source>sink logit</source>
        <translation>汇聚 logit</translation>
    </message>
    <message>
        <source>A learned logit per head as one more softmax column, dropped after the softmax (gpt-oss)</source>
        <translation>每个头一个可学习的 logit，作为 softmax 的额外一列，softmax 之后丢弃（gpt-oss）</translation>
    </message>
    <message>
        <source>Softmax</source>
        <translation>Softmax</translation>
    </message>
    <message>
        <source>The temperature acts on NoPE layers only: set NoPE every, or tick none.</source>
        <translation>温度只作用于 NoPE 层：请设置 NoPE 间隔，或勾选 none。</translation>
    </message>
    <message>
        <source>Every layer uses the ticked scheme.</source>
        <translation>每一层都使用勾选的方案。</translation>
    </message>
    <message>
        <source>&lt;b&gt;The model has %1 layer(s), fewer than K = %2: no layer would be NoPE, so the schedule does nothing.&lt;/b&gt; Raise Layers or lower K.</source>
        <translation>&lt;b&gt;模型只有 %1 层，少于 K = %2：没有任何一层会是 NoPE 层，这个间隔不起作用。&lt;/b&gt;请增加层数或减小 K。</translation>
    </message>
    <message>
        <source>NoPE layers: %1 of %2 (counted from 1); rope or xpos on the others.</source>
        <translation>NoPE 层：共 %2 层中的第 %1 层（从 1 数起）；其余层用 rope 或 xpos。</translation>
    </message>
    <message>
        <source>%1 cannot train: %2</source>
        <translation>%1 无法训练：%2</translation>
    </message>
    <message>
        <source>Continue the text</source>
        <translation>续写文本</translation>
    </message>
</context>
<context>
    <name>plab::ui::ViewBase</name>
    <message>
        <source>masked (−inf)</source>
        <translation>已掩码（−inf）</translation>
    </message>
    <message>
        <source>Canceled after %1 s.</source>
        <translation>已取消，用时 %1 秒。</translation>
    </message>
    <message>
        <source>%1 s</source>
        <translation>%1 秒</translation>
    </message>
    <message>
        <source>%1 min %2 s</source>
        <translation>%1 分 %2 秒</translation>
    </message>
</context>
</TS>
