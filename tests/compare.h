// The worst error between computed values and a reference, that a NaN or an infinity cannot slip through.
#pragma once

#include <QString>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

namespace plab::test {

// std::max(worst, NaN) keeps the old maximum, so a NaN output would pass a `worst < tol` check. This accumulator
// poisons itself instead: once any place is non-finite (in the computed value, the reference or their difference)
// without the reference holding that same value there (a masked -inf in both), value() is NaN, so every comparison
// with it - `< tol`, `<= tol` and the "must differ" `> tol` alike - is false, and message() names the place.
class ErrorMax {
public:
    // Absolute: |got - want|. Relative: |got - want| / (1 + |want|).
    enum Scale { Absolute, Relative };

    explicit ErrorMax(Scale scale = Absolute) : m_scale(scale) {}

    // The next place (numbered 0, 1, ... in the order of add calls).
    void add(double got, double want) { addAt(m_count, got, want); }

    // Place `index` (a flat index of the caller's choice, for the message).
    void addAt(std::ptrdiff_t index, double got, double want)
    {
        ++m_count;
        if (!std::isfinite(got) || !std::isfinite(want)) {
            if (got == want) // the same infinity on both sides (NaN never equals itself)
                return;
            poison(index, got, want);
            return;
        }
        double error = std::abs(got - want);
        if (m_scale == Relative)
            error /= 1 + std::abs(want);
        if (!std::isfinite(error)) {
            poison(index, got, want);
            return;
        }
        if (!m_nonFinite && (error > m_worst || m_index < 0)) { // the message keeps the first non-finite place
            m_worst = error;
            m_index = index;
            m_got = got;
            m_want = want;
        }
    }

    // Two sequences element by element (anything with size() and operator[]); a size mismatch poisons.
    template <class Got, class Want>
    ErrorMax& addAll(const Got& got, const Want& want)
    {
        if (std::size_t(got.size()) != std::size_t(want.size())) {
            m_sizeMismatch = true;
            m_finite = false;
        }
        const std::size_t n = std::min<std::size_t>(got.size(), want.size());
        for (std::size_t i = 0; i < n; ++i)
            addAt(std::ptrdiff_t(i), double(got[i]), double(want[i]));
        return *this;
    }

    // The worst error seen; NaN once a non-finite mismatch or a size mismatch was seen; 0 before any add.
    double value() const { return m_finite ? m_worst : std::numeric_limits<double>::quiet_NaN(); }
    // Where: the first non-finite place, else the worst error's place; -1 when nothing was added.
    std::ptrdiff_t index() const { return m_index; }
    bool finite() const { return m_finite; }
    // value() <= tolerance, false on any non-finite place.
    bool within(double tolerance) const { return m_finite && m_worst <= tolerance; }

    // "max |error| E at [i] (got G, want W)", or the non-finite place, prefixed by `what`.
    QString message(const QString& what = QString()) const
    {
        const QString head = what.isEmpty() ? QString() : what + QStringLiteral(": ");
        const QString kind = m_scale == Relative ? QStringLiteral("max |got - want| / (1 + |want|)")
                                                 : QStringLiteral("max |got - want|");
        if (m_sizeMismatch && m_index < 0)
            return head + QStringLiteral("sizes differ");
        const QString place = QStringLiteral(" at [%1] (got %2, want %3)").arg(m_index).arg(m_got).arg(m_want);
        if (!m_finite && m_nonFinite)
            return head + QStringLiteral("non-finite") + place +
                   (m_sizeMismatch ? QStringLiteral("; sizes differ") : QString());
        return head + kind + QStringLiteral(" = %1").arg(m_worst) + place +
               (m_sizeMismatch ? QStringLiteral("; sizes differ") : QString());
    }

private:
    void poison(std::ptrdiff_t index, double got, double want)
    {
        if (m_nonFinite)
            return; // keep the first non-finite place for the message
        m_finite = false;
        m_nonFinite = true;
        m_index = index;
        m_got = got;
        m_want = want;
    }

    Scale m_scale;
    double m_worst = 0;
    std::ptrdiff_t m_index = -1;
    std::ptrdiff_t m_count = 0;
    double m_got = 0, m_want = 0;
    bool m_finite = true, m_nonFinite = false, m_sizeMismatch = false;
};

// The worst error of `got` against `want`, element by element.
template <class Got, class Want>
ErrorMax maxError(const Got& got, const Want& want, ErrorMax::Scale scale = ErrorMax::Absolute)
{
    ErrorMax e(scale);
    e.addAll(got, want);
    return e;
}

// Worst |got - want| / (1 + |want|).
template <class Got, class Want>
ErrorMax maxRelativeError(const Got& got, const Want& want)
{
    return maxError(got, want, ErrorMax::Relative);
}

} // namespace plab::test
