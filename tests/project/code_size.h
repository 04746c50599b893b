// Function and file lengths read from C++ sources without a compiler, for tst_code_size's limits.
#pragma once

#include <QList>
#include <QRegularExpression>
#include <QString>

#include <algorithm>

namespace plab::test {

// A function body found in a source: its name as written before the parameter list (e.g. "TrainView::buildFields"),
// and its lines from the first line of its declaration to the line of its closing brace, both 1-based.
struct FunctionSpan {
    QString name;
    int firstLine = 0;
    int lastLine = 0;
    int lines() const { return lastLine - firstLine + 1; }
};

// `text` with comments, string and character literals' contents and preprocessor lines turned into spaces, newlines
// kept: what is left is code whose braces and parentheses can be counted.
inline QString blankedSource(const QString& text)
{
    QString out = text;
    const qsizetype n = text.size();
    const auto blank = [&](qsizetype from, qsizetype to) { // [from, to), newlines kept
        for (qsizetype i = from; i < to && i < n; ++i)
            if (out[i] != QLatin1Char('\n'))
                out[i] = QLatin1Char(' ');
    };
    bool lineStart = true; // only spaces since the last newline
    for (qsizetype i = 0; i < n;) {
        const QChar c = text[i];
        const QChar next = i + 1 < n ? text[i + 1] : QChar();
        if (lineStart && c == QLatin1Char('#')) { // a preprocessor line, with its backslash continuations
            qsizetype end = i;
            while (end < n && !(text[end] == QLatin1Char('\n') && text[end - 1] != QLatin1Char('\\')))
                ++end;
            blank(i, end);
            i = end;
            continue;
        }
        if (c == QLatin1Char('\n'))
            lineStart = true;
        else if (!c.isSpace())
            lineStart = false;
        if (c == QLatin1Char('/') && next == QLatin1Char('/')) {
            qsizetype end = text.indexOf(QLatin1Char('\n'), i);
            end = end < 0 ? n : end;
            blank(i, end);
            i = end;
        } else if (c == QLatin1Char('/') && next == QLatin1Char('*')) {
            qsizetype end = text.indexOf(QLatin1String("*/"), i + 2);
            end = end < 0 ? n : end + 2;
            blank(i, end);
            i = end;
        } else if (c == QLatin1Char('"') && i > 0 && text[i - 1] == QLatin1Char('R')) { // R"delim( ... )delim"
            const qsizetype open = text.indexOf(QLatin1Char('('), i);
            const QString close = QLatin1Char(')') + text.mid(i + 1, open - i - 1) + QLatin1Char('"');
            qsizetype end = open < 0 ? -1 : text.indexOf(close, open);
            end = end < 0 ? n : end + close.size();
            blank(i + 1, end - 1);
            i = end;
        } else if (c == QLatin1Char('"') || (c == QLatin1Char('\'') && !(i > 0 && (text[i - 1].isLetterOrNumber())))) {
            // A string or a character literal; a quote after a letter or digit is a digit separator (1'000).
            qsizetype end = i + 1;
            while (end < n && text[end] != c && text[end] != QLatin1Char('\n'))
                end += text[end] == QLatin1Char('\\') ? 2 : 1;
            blank(i + 1, end);
            i = end + 1;
        } else {
            ++i;
        }
    }
    return out;
}

namespace code_size_detail {

// `head` with every balanced (...) group emptied to "()" and template parameter lists removed, spaces collapsed.
inline QString collapsedHead(const QString& head)
{
    QString flat;
    int depth = 0;
    for (const QChar c : head) {
        if (c == QLatin1Char('(')) {
            if (depth++ == 0)
                flat += c;
        } else if (c == QLatin1Char(')')) {
            if (--depth == 0)
                flat += c;
            depth = std::max(depth, 0);
        } else if (depth == 0) {
            flat += c;
        }
    }
    static const QRegularExpression templateWord(QStringLiteral("\\btemplate\\s*<"));
    for (QRegularExpressionMatch m = templateWord.match(flat); m.hasMatch(); m = templateWord.match(flat)) {
        qsizetype end = m.capturedEnd();
        for (int angles = 1; end < flat.size() && angles > 0; ++end)
            angles += flat[end] == QLatin1Char('<') ? 1 : flat[end] == QLatin1Char('>') ? -1 : 0;
        flat.remove(m.capturedStart(), end - m.capturedStart());
    }
    return flat.simplified();
}

enum class Scope { Namespace, Class, Function, Block };

// What a '{' opens at namespace or class level, read from the code since the last declaration ended.
inline Scope classify(const QString& head)
{
    const QString flat = collapsedHead(head);
    static const QRegularExpression namespaceWord(QStringLiteral("\\bnamespace\\b|\\bextern\\s*\"\\s*\"$"));
    static const QRegularExpression enumWord(QStringLiteral("\\benum\\b"));
    static const QRegularExpression classWord(QStringLiteral("\\b(class|struct|union)\\b"));
    static const QRegularExpression operatorToken(QStringLiteral("\\boperator\\s*[^\\s(]*"));
    static const QRegularExpression signatureEnd(QStringLiteral(
        "\\)\\s*(\\b(const|volatile|noexcept|override|final|mutable)\\b\\s*(\\(\\))?\\s*|&&?\\s*|->[^{;]*)*$"));
    static const QRegularExpression initializerList(QStringLiteral("\\)\\s*:(?!:).*\\}$"));
    if (namespaceWord.match(flat).hasMatch())
        return Scope::Namespace;
    if (enumWord.match(flat).hasMatch())
        return Scope::Block;
    if (QString(flat).remove(operatorToken).contains(QLatin1Char('=')))
        return Scope::Block; // an initializer, or a lambda stored in a variable
    if (signatureEnd.match(flat).hasMatch() || initializerList.match(flat).hasMatch())
        return Scope::Function;
    if (classWord.match(flat).hasMatch())
        return Scope::Class;
    return Scope::Block; // a braced member initializer, an aggregate
}

// The function's name: the token before its parameter list.
inline QString functionName(const QString& head)
{
    static const QRegularExpression name(QStringLiteral(
        "((?:[A-Za-z_~][\\w]*\\s*::\\s*)*(?:operator\\s*(?:\\(\\s*\\)|[^\\s(]+)|~?[A-Za-z_]\\w*))\\s*\\("));
    const QRegularExpressionMatch m = name.match(head);
    return m.hasMatch() ? m.captured(1).remove(QLatin1Char(' ')) : QStringLiteral("<unnamed>");
}

} // namespace code_size_detail

// Every function body defined at namespace or class level in `source` (lambdas and blocks inside a function count as
// part of it; a lambda stored in a namespace-level variable is not a function here).
inline QList<FunctionSpan> functionSpans(const QString& source)
{
    using namespace code_size_detail;
    const QString code = blankedSource(source);
    struct Open {
        Scope scope;
        FunctionSpan span;
    };
    QList<Open> stack;
    QString head;             // code since the last declaration ended, at namespace or class level
    qsizetype headStart = -1; // offset of head's first non-space character
    int line = 1;
    QList<FunctionSpan> spans;
    const auto inBody = [&] {
        return std::any_of(stack.begin(), stack.end(),
                           [](const Open& o) { return o.scope == Scope::Function || o.scope == Scope::Block; });
    };
    for (qsizetype i = 0; i < code.size(); ++i) {
        const QChar c = code[i];
        if (c == QLatin1Char('\n'))
            ++line;
        if (c == QLatin1Char('{')) {
            if (inBody()) {
                stack.append({Scope::Block, {}});
                continue;
            }
            const Scope scope = classify(head);
            FunctionSpan span;
            if (scope == Scope::Function) {
                span.name = functionName(head.simplified());
                span.firstLine =
                    headStart < 0 ? line : line - int(code.mid(headStart, i - headStart).count(QLatin1Char('\n')));
            }
            stack.append({scope, span});
            if (scope != Scope::Block) {
                head.clear();
                headStart = -1;
            } else {
                head += c;
            }
        } else if (c == QLatin1Char('}')) {
            if (stack.isEmpty())
                continue; // unbalanced; the compiler would say so
            Open closed = stack.takeLast();
            if (closed.scope == Scope::Function) {
                closed.span.lastLine = line;
                spans.append(closed.span);
            }
            if (inBody())
                continue;
            if (closed.scope == Scope::Block) {
                head += c;
            } else {
                head.clear();
                headStart = -1;
            }
        } else if (!inBody()) {
            static const QRegularExpression accessLabel(QStringLiteral(
                "^(Q_OBJECT\\s+)?(public|private|protected)?\\s*(slots|Q_SLOTS|signals|Q_SIGNALS)?\\s*:$"));
            const bool scope = c == QLatin1Char(':') && (i + 1 < code.size() && code[i + 1] == QLatin1Char(':'));
            if (c == QLatin1Char(';') || (c == QLatin1Char(':') && !scope && !head.endsWith(QLatin1Char(':')) &&
                                          accessLabel.match((head + c).simplified()).hasMatch())) {
                head.clear(); // a declaration ended, or an access label (public:) that is not part of the next one
                headStart = -1;
            } else {
                if (headStart < 0 && !c.isSpace())
                    headStart = i;
                if (headStart >= 0)
                    head += c;
            }
        }
    }
    return spans;
}

} // namespace plab::test
