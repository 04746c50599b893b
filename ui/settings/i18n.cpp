// Languages, the translator and the translation table of core's scheme catalogue.
#include "settings/i18n.h"

#include "schemes/rotary_scaling.h"
#include "schemes/schemes.h"

#include <QCoreApplication>
#include <QFile>
#include <QFont>
#include <QGuiApplication>
#include <QLocale>
#include <QSettings>
#include <QTranslator>

#include <memory>

namespace plab::ui {

namespace {

// core's catalogue texts, keyed by scheme name. The English texts must equal core's (core/schemes/schemes.cpp): an entry
// that no longer does is ignored (staleSchemeTexts() names it, tst_translations fails on it).
struct SchemeText {
    const char* name;
    const char* title;
    const char* formula;
    const char* explanation;
};

struct ParamText {
    const char* name;
    const char* description;
};

// clang-format off
const SchemeText kSchemeTexts[] = {
    {"none",
     QT_TRANSLATE_NOOP("SchemeText", "NoPE (no positional encoding)"),
     QT_TRANSLATE_NOOP("SchemeText", "b(m, n) = 0   (causal mask only)"),
     QT_TRANSLATE_NOOP("SchemeText", "No position information at all. A causal decoder can still infer position from how many tokens it sees, which is why NoPE extrapolates better than one might expect.")},
    {"sinusoidal",
     QT_TRANSLATE_NOOP("SchemeText", "Sinusoidal (absolute)"),
     QT_TRANSLATE_NOOP("SchemeText", "p[m,2i] = sin(m w_i), p[m,2i+1] = cos(m w_i), w_i = base^(-2i/d); view: dot(p_m, p_n) - d/2 = sum_{i<d/2} cos((m-n) w_i) - d/2"),
     QT_TRANSLATE_NOOP("SchemeText", "The original Transformer's absolute encoding, added to the token embedding. The dot product of two position vectors depends only on their distance and oscillates as it decays; past the training length the model meets position vectors it has never seen.")},
    {"learned",
     QT_TRANSLATE_NOOP("SchemeText", "Learned absolute"),
     QT_TRANSLATE_NOOP("SchemeText", "x_m = e(token_m) + P[m],  P a trained table of `context` rows"),
     QT_TRANSLATE_NOOP("SchemeText", "A trained table of position vectors (GPT-2, BERT). It has no row for positions past the training context, so it cannot extrapolate at all: such positions are reported as unsupported.")},
    {"rope",
     QT_TRANSLATE_NOOP("SchemeText", "RoPE (rotary)"),
     QT_TRANSLATE_NOOP("SchemeText", "rotate pair (2i, 2i+1) of q_m and k_n by m θ_i, n θ_i; θ_i = base^(-2i/r) for i < round(p r/2), else 0; r = ⌊f d⌋ (f: rotary-fraction, p: keep); probe (q = k = 1): sum_{i<d/2} 2 cos((m-n) θ_i)"),
     QT_TRANSLATE_NOOP("SchemeText", "Rotary embeddings rotate queries and keys so that their dot product depends only on the relative distance. The probe shows the score of an all-ones query and key: a slowly decaying oscillation. Unseen rotation angles past the training length hurt extrapolation. keep < 1 is p-RoPE (Barbero et al. 2025): only the highest frequencies turn, the lowest are set to 0. rotary-fraction < 1 is GPT-NeoX's rotary_pct: only the first dims turn, over a full ladder of frequencies of their own.")},
    {"xpos",
     QT_TRANSLATE_NOOP("SchemeText", "XPOS (rotary with exponential decay)"),
     QT_TRANSLATE_NOOP("SchemeText", "rope, then q_m *= ζ_i^(m/s), k_n *= ζ_i^(-n/s), ζ_i = (2i + γd)/((1+γ)d); probe: sum_i 2 cos((m-n) θ_i) ζ_i^((m-n)/s)"),
     QT_TRANSLATE_NOOP("SchemeText", "XPOS multiplies the rotary score by a per-frequency exponential decay in distance, making long-range scores smaller and steadier. It is causal only; with blockwise causal attention (bca) it extrapolates further.")},
    {"t5",
     QT_TRANSLATE_NOOP("SchemeText", "T5 relative buckets"),
     QT_TRANSLATE_NOOP("SchemeText", "b_h(m, n) = B[bucket(n - m), h]; exact buckets below num-buckets/2, log-spaced up to max-distance"),
     QT_TRANSLATE_NOOP("SchemeText", "A learned scalar per (bucket, head). Near distances get their own bucket, far ones share log-spaced buckets, everything past max-distance the last one. Without a trained model the table shows its untrained prior -log(1 + distance).")},
    {"alibi",
     QT_TRANSLATE_NOOP("SchemeText", "ALiBi (linear biases)"),
     QT_TRANSLATE_NOOP("SchemeText", "b_h(m, n) = -slope_h (m - n); slope_h = 2^(-8(h+1)/H) for H a power of two"),
     QT_TRANSLATE_NOOP("SchemeText", "Attention with Linear Biases: a fixed penalty proportional to distance, with a geometric sequence of slopes across heads. No position embedding at all; trains short and tests long.")},
    {"kerple-power",
     QT_TRANSLATE_NOOP("SchemeText", "KERPLE (power kernel)"),
     QT_TRANSLATE_NOOP("SchemeText", "b_h(m, n) = -r1 |m - n|^r2,  r1 > 0, 0 < r2 <= 2"),
     QT_TRANSLATE_NOOP("SchemeText", "KERPLE derives relative biases from conditionally positive definite kernels. The power variant generalises ALiBi (r2 = 1); r1 and r2 are trained per head.")},
    {"kerple-log",
     QT_TRANSLATE_NOOP("SchemeText", "KERPLE (logarithmic kernel)"),
     QT_TRANSLATE_NOOP("SchemeText", "b_h(m, n) = -r1 log(1 + r2 |m - n|),  r1, r2 > 0"),
     QT_TRANSLATE_NOOP("SchemeText", "The logarithmic KERPLE variant: the penalty grows only logarithmically with distance, so far tokens stay reachable. r1 and r2 are trained per head.")},
    {"sandwich",
     QT_TRANSLATE_NOOP("SchemeText", "Sandwich"),
     QT_TRANSLATE_NOOP("SchemeText", "b_h(m, n) = (sum_{i<d/2} cos((m-n) w_i) - d/2) H / (8 (h+1)),  w_i = base^(-2i/d)"),
     QT_TRANSLATE_NOOP("SchemeText", "Sandwich uses the sinusoidal dot product itself as a relative bias, scaled per head like ALiBi's slopes: it decays roughly logarithmically and oscillates a little.")},
    {"local",
     QT_TRANSLATE_NOOP("SchemeText", "Local attention (super baseline)"),
     QT_TRANSLATE_NOOP("SchemeText", "b(m, n) = 0 if 0 <= m - n < window (bidirectional: |m - n| < window), else -inf"),
     QT_TRANSLATE_NOOP("SchemeText", "The 'super baseline' of the length-extrapolation literature: each query sees only the last `window` keys, its training context. It can never meet a distance it was not trained on. In a model the windows chain through the layers (a token reaches layers x (window - 1) back), so a model's default window keeps that whole reach inside the training context.")},
    {"bca",
     QT_TRANSLATE_NOOP("SchemeText", "Blockwise causal attention"),
     QT_TRANSLATE_NOOP("SchemeText", "blocks of window/2; query m sees keys n <= m in its own block and the previous one"),
     QT_TRANSLATE_NOOP("SchemeText", "XPOS's blockwise causal attention: a sliding window made of blocks, so every query sees between window/2 and window keys, all at distances seen in training.")},
    {"fire",
     QT_TRANSLATE_NOOP("SchemeText", "FIRE (learned function of the normalised distance)"),
     QT_TRANSLATE_NOOP("SchemeText", "b_h(m, n) = MLP_h(ψ(m - n) / ψ(max(m, T))),  ψ(t) = ln(c t + 1),  MLP 1 -> 32 -> H (ReLU), c and T learned"),
     QT_TRANSLATE_NOOP("SchemeText", "FIRE (Li et al., ICLR 2024) learns the bias as a function of the distance divided by the query's position (its 'progressive interpolation'): inputs stay in [0, 1] at any length, and the log transform ψ keeps near distances apart. Rows m <= T use T instead of m, so short sequences see a plain function of distance. It contains ALiBi and KERPLE as special cases. Without a trained model the view shows its untrained prior (the reference code's random initialisation, from a fixed seed).")},
    {"fox",
     QT_TRANSLATE_NOOP("SchemeText", "FoX (forgetting gate, data-dependent)"),
     QT_TRANSLATE_NOOP("SchemeText", "b_h(m, n) = F_m - F_n,  F_t = sum_{l<=t} ln σ(w_h . x_l + b_h),  x_l the layer's normed input; no other position; view (w = 0): -(m - n) ln(1 + e^(-b))"),
     QT_TRANSLATE_NOOP("SchemeText", "The Forgetting Transformer (Lin et al., ICLR 2025) gives every head a forget gate f_t = σ(w_h . x_t + b_h) computed from the token itself: key n's score drops by -ln f_l for every later token l up to the query. The decay is learned and depends on the text (a gate near 1 keeps the past, near 0 wipes it); nothing else encodes position. Without a model the view shows the untrained gate (w = 0): an ALiBi line of slope ln(1 + e^(-b)) per token; a trained model's bias depends on the text it reads (the per-input view).")},
    {"cope",
     QT_TRANSLATE_NOOP("SchemeText", "CoPE (contextual positions)"),
     QT_TRANSLATE_NOOP("SchemeText", "b(m, n) = z_m(p_mn) interpolated between ⌊p⌋ and ⌈p⌉,  z_m(p) = q_m · E[:, p],  p_mn = min(Σ_{t=n..m} σ(q_m · k_t / √d), npos-max - 1),  E learned (d x npos-max, shared by the heads)"),
     QT_TRANSLATE_NOOP("SchemeText", "CoPE (Golovneva et al. 2024) makes a position a count: each key t between n and the query m adds its gate σ(q_m · k_t / √d), a number between 0 and 1, so a head can count words or sentences instead of tokens. The position p_mn is looked up in a learned table of position embeddings (interpolated between integers) and its score against the query is added to the logit. The bias depends on the text, so it has no static view: the Attention on text tab shows a trained model's positions and bias on your text. The lab's path is exact and not fused: it costs more than the fused schemes.")},
};

const ParamText kParamTexts[] = {
    {"dim", QT_TRANSLATE_NOOP("SchemeText", "dimension of the sinusoid / rotation (number of frequencies x 2)")},
    {"base", QT_TRANSLATE_NOOP("SchemeText", "wavelength base: frequencies are base^(-2i/dim)")},
    {"keep", QT_TRANSLATE_NOOP("SchemeText", "p-RoPE's p: the fraction of the pairs that turn, highest frequencies first; the others get θ = 0")},
    {"rotary-fraction", QT_TRANSLATE_NOOP("SchemeText", "GPT-NeoX's rotary_pct f: only the first ⌊f d⌋ dims turn, with θ_i = base^(-2i/⌊f d⌋)")},
    {"gamma", QT_TRANSLATE_NOOP("SchemeText", "decay offset γ: larger means weaker decay")},
    {"scale-base", QT_TRANSLATE_NOOP("SchemeText", "scale s: the distance over which ζ acts")},
    {"num-buckets", QT_TRANSLATE_NOOP("SchemeText", "number of buckets (halved per direction when bidirectional)")},
    {"max-distance", QT_TRANSLATE_NOOP("SchemeText", "distance from which all keys share the last bucket")},
    {"r1", QT_TRANSLATE_NOOP("SchemeText", "scale of the penalty")},
    {"r2", QT_TRANSLATE_NOOP("SchemeText", "power of the distance (1 = ALiBi-like)")},
    {"r2", QT_TRANSLATE_NOOP("SchemeText", "distance scale inside the logarithm")},
    {"window", QT_TRANSLATE_NOOP("SchemeText", "number of visible keys (default: the training context; in a model of L layers the largest W with L (W - 1) + 1 <= context)")},
    {"window", QT_TRANSLATE_NOOP("SchemeText", "window (two blocks of window/2 keys)")},
    {"sinks", QT_TRANSLATE_NOOP("SchemeText", "keys n < sinks stay visible to every query m >= n (attention sinks); positions stay the original ones (no rolling re-index as in StreamingLLM)")},
    {"c", QT_TRANSLATE_NOOP("SchemeText", "initial scale c of ψ(t) = ln(c t + 1) (learned in a model)")},
    {"threshold", QT_TRANSLATE_NOOP("SchemeText", "initial threshold T: rows m <= T are normalised by ψ(T) (learned in a model as a multiple of it)")},
    {"gate-bias", QT_TRANSLATE_NOOP("SchemeText", "initial forget-gate bias b of every head (learned in a model; 0, the reference code's, starts at f ≈ 1/2)")},
    {"npos-max", QT_TRANSLATE_NOOP("SchemeText", "positions are clamped to npos-max - 1; E has npos-max columns (default: the training context in a model)")},
    // Parameters of the rotary length-extension methods (core/schemes/rotary_scaling.cpp).
    {"factor", QT_TRANSLATE_NOOP("SchemeText", "s: how many times longer than the training context")},
    {"beta-fast", QT_TRANSLATE_NOOP("SchemeText", "rotations over L above which a frequency is kept")},
    {"beta-slow", QT_TRANSLATE_NOOP("SchemeText", "rotations over L below which a frequency is interpolated")},
    {"attention-factor", QT_TRANSLATE_NOOP("SchemeText", "multiplies cos and sin of q and k (0: 0.1 ln s + 1); logits scale by its square")},
    {"attention-factor", QT_TRANSLATE_NOOP("SchemeText", "multiplies cos and sin of q and k (0: √(1 + ln s / ln L), 1 when s <= 1); logits scale by its square")},
    {"low-freq-factor", QT_TRANSLATE_NOOP("SchemeText", "wavelengths above L/low are interpolated")},
    {"high-freq-factor", QT_TRANSLATE_NOOP("SchemeText", "wavelengths below L/high are kept")},
    {"window", QT_TRANSLATE_NOOP("SchemeText", "w: distances below it keep their position (0: half the training context; must be < L)")},
    {"leak", QT_TRANSLATE_NOOP("SchemeText", "k: positions past the window grow 1/k as fast")},
    {"original-context", QT_TRANSLATE_NOOP("SchemeText", "L: the context the model was first trained at (0: its training context)")},
    {"group", QT_TRANSLATE_NOOP("SchemeText", "G: positions past the window are grouped G at a time")},
};

// Titles of the rotary length-extension methods, keyed by method name (core/schemes/rotary_scaling.cpp).
struct MethodText
{
    const char *name;
    const char *title;
};
const MethodText kMethodTexts[] = {
    {"none", QT_TRANSLATE_NOOP("SchemeText", "No length extension")},
    {"pi", QT_TRANSLATE_NOOP("SchemeText", "Position interpolation")},
    {"ntk", QT_TRANSLATE_NOOP("SchemeText", "NTK-aware base scaling")},
    {"dynamic-ntk", QT_TRANSLATE_NOOP("SchemeText", "Dynamic NTK")},
    {"yarn", QT_TRANSLATE_NOOP("SchemeText", "YaRN")},
    {"llama3", QT_TRANSLATE_NOOP("SchemeText", "Llama 3 band-wise scaling")},
    {"rerope", QT_TRANSLATE_NOOP("SchemeText", "ReRoPE")},
    {"leaky-rerope", QT_TRANSLATE_NOOP("SchemeText", "Leaky ReRoPE")},
    {"self-extend", QT_TRANSLATE_NOOP("SchemeText", "Self-Extend")},
    {"longrope", QT_TRANSLATE_NOOP("SchemeText", "LongRoPE")},
};
// clang-format on

// Qt's own texts of the standard dialog buttons (Qt's translations, qttranslations6-l10n, are not installed with the
// app): listed here so lupdate keeps them in our .ts, translated in Qt's context.
[[maybe_unused]] const char* const kQtButtonTexts[] = {
    QT_TRANSLATE_NOOP("QPlatformTheme", "OK"),      QT_TRANSLATE_NOOP("QPlatformTheme", "Save"),
    QT_TRANSLATE_NOOP("QPlatformTheme", "Cancel"),  QT_TRANSLATE_NOOP("QPlatformTheme", "Close"),
    QT_TRANSLATE_NOOP("QPlatformTheme", "Open"),    QT_TRANSLATE_NOOP("QPlatformTheme", "&Yes"),
    QT_TRANSLATE_NOOP("QPlatformTheme", "&No"),     QT_TRANSLATE_NOOP("QPlatformTheme", "Apply"),
    QT_TRANSLATE_NOOP("QPlatformTheme", "Discard"), QT_TRANSLATE_NOOP("QPlatformTheme", "Help"),
};

const SchemeText* schemeText(const SchemeInfo& info)
{
    for (const SchemeText& t : kSchemeTexts)
        if (info.name == t.name)
            return &t;
    return nullptr;
}

// The translation of `english` when it is what core says now, else core's own text.
QString translated(const char* english, const std::string& core)
{
    if (english && core == english)
        return QCoreApplication::translate("SchemeText", english);
    return QString::fromStdString(core);
}

std::unique_ptr<QTranslator>& installed()
{
    static std::unique_ptr<QTranslator> translator;
    return translator;
}

QString& current()
{
    static QString code = QStringLiteral("en");
    return code;
}

QString number(double v)
{
    return QString::number(v, 'g', 10);
}

} // namespace

const QList<Language>& languages()
{
    static const QList<Language> list = {{QStringLiteral("en"), QStringLiteral("English")},
                                         {QStringLiteral("zh_CN"), QStringLiteral("中文")}};
    return list;
}

bool isKnownLanguage(const QString& code)
{
    for (const Language& l : languages())
        if (l.code == code)
            return true;
    return false;
}

QString languageCodes()
{
    QStringList codes;
    for (const Language& l : languages())
        codes << l.code;
    return codes.join(QStringLiteral(", "));
}

bool setLanguage(const QString& code, QString* error)
{
    auto fail = [&](const QString& message) {
        if (error)
            *error = message;
        return false;
    };
    if (!isKnownLanguage(code))
        return fail(QStringLiteral("language '%1' is not available; allowed: %2").arg(code, languageCodes()));
    std::unique_ptr<QTranslator> next;
    if (code != QLatin1String("en")) {
        next = std::make_unique<QTranslator>();
        const QString file = QStringLiteral(":/i18n/positionlab_%1.qm").arg(code);
        if (!next->load(file))
            return fail(QStringLiteral("language '%1': the translation %2 is missing from this build").arg(code, file));
    }
    if (installed())
        QCoreApplication::removeTranslator(installed().get());
    installed() = std::move(next);
    if (installed())
        QCoreApplication::installTranslator(installed().get());
    QLocale::setDefault(QLocale(code == QLatin1String("en") ? QStringLiteral("en_US") : code));
    // Widgets: simplified-Chinese glyphs for Chinese text rather than whichever CJK face the font fallback finds.
    if (qobject_cast<QGuiApplication*>(QCoreApplication::instance())) {
        static const QString base = QGuiApplication::font().family();
        QFont font = QGuiApplication::font();
        QStringList families{base};
        if (code == QLatin1String("zh_CN"))
            families << QStringLiteral("Noto Sans CJK SC");
        font.setFamilies(families);
        QGuiApplication::setFont(font);
    }
    current() = code;
    return true;
}

QString currentLanguage()
{
    return current();
}

QString savedLanguage()
{
    const QString code = QSettings().value(QStringLiteral("language"), QStringLiteral("en")).toString();
    return isKnownLanguage(code) ? code : QStringLiteral("en");
}

void saveLanguage(const QString& code)
{
    QSettings().setValue(QStringLiteral("language"), code);
}

QString schemeTitle(const SchemeInfo& info)
{
    const SchemeText* t = schemeText(info);
    return translated(t ? t->title : nullptr, info.title);
}

QString schemeFormula(const SchemeInfo& info)
{
    const SchemeText* t = schemeText(info);
    return translated(t ? t->formula : nullptr, info.formula);
}

QString schemeExplanation(const SchemeInfo& info)
{
    const SchemeText* t = schemeText(info);
    return translated(t ? t->explanation : nullptr, info.explanation);
}

QString paramDescription(const SchemeInfo&, const ParamInfo& param)
{
    for (const ParamText& t : kParamTexts)
        if (param.name == t.name && param.description == t.description)
            return QCoreApplication::translate("SchemeText", t.description);
    return QString::fromStdString(param.description);
}

QString rotaryMethodTitle(const RotaryMethodInfo& info)
{
    for (const MethodText& t : kMethodTexts)
        if (info.name == t.name)
            return translated(t.title, info.title);
    return QString::fromStdString(info.title);
}

QString paramRange(const ParamInfo& param)
{
    const QString interval =
        QStringLiteral("%1%2, %3%4")
            .arg(param.minExclusive ? QStringLiteral("(") : QStringLiteral("["), number(param.minValue),
                 number(param.maxValue), param.maxExclusive ? QStringLiteral(")") : QStringLiteral("]"));
    if (param.even)
        return QCoreApplication::translate("SchemeText", "even integers in %1").arg(interval);
    if (param.integer)
        return QCoreApplication::translate("SchemeText", "integers in %1").arg(interval);
    return interval;
}

QStringList staleSchemeTexts()
{
    QStringList stale;
    for (const SchemeInfo& info : schemeCatalog()) {
        const SchemeText* t = schemeText(info);
        const QString name = QString::fromStdString(info.name);
        if (!t) {
            stale << name + QStringLiteral(" (no entry)");
            continue;
        }
        if (info.title != t->title)
            stale << name + QStringLiteral(".title");
        if (info.formula != t->formula)
            stale << name + QStringLiteral(".formula");
        if (info.explanation != t->explanation)
            stale << name + QStringLiteral(".explanation");
        for (const ParamInfo& p : info.params) {
            bool found = false;
            for (const ParamText& pt : kParamTexts)
                found = found || (p.name == pt.name && p.description == pt.description);
            if (!found)
                stale << name + QStringLiteral(".") + QString::fromStdString(p.name);
        }
    }
    for (const RotaryMethodInfo& m : rotaryMethodCatalog()) {
        const QString name = QString::fromStdString(m.name);
        bool titled = false;
        for (const MethodText& t : kMethodTexts)
            titled = titled || (m.name == t.name && m.title == t.title);
        if (!titled)
            stale << name + QStringLiteral(".title");
        for (const ParamInfo& p : m.params) {
            bool found = false;
            for (const ParamText& pt : kParamTexts)
                found = found || (p.name == pt.name && p.description == pt.description);
            if (!found)
                stale << name + QStringLiteral(".") + QString::fromStdString(p.name);
        }
    }
    return stale;
}

} // namespace plab::ui
