// What evaluation asks of a model, so the lab's byte models and Hugging Face folders share one evaluation path.
#pragma once

#include "hf/hf_scaling_layers.h"
#include "schemes/schemes.h"

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace plab {

namespace hf {
class Tokenizer;
}

class Model;
class HfModel;
struct HfConfig;

// A causal language model over integer token ids, under a length-extension method that can be replaced zero-shot.
// evaluateModel and evaluateUnderMethods (core/runs) read models only through this.
class LanguageModel {
public:
    virtual ~LanguageModel() = default;

    virtual std::string scheme() const = 0;    // the positional scheme: "rope", "xpos", "alibi", "learned", ...
    virtual bool rotary() const = 0;           // whether length-extension methods apply (rope, xpos)
    virtual int context() const = 0;           // the training context L
    virtual int maxLength() const = 0;         // the longest window it accepts (learned positions: its context)
    virtual int vocabulary() const = 0;        // ids are in [0, vocabulary)
    virtual const char* tokenUnit() const = 0; // "byte" or "token": what messages and bits-per-unit count

    // The method in use and its NAME=VALUE settings.
    virtual std::string scaling() const = 0;
    virtual std::vector<std::string> scalingSettings() const = 0;
    // The settings a comparison starts from for `method` when `longestLength` is the longest length evaluated (before
    // the user's own settings are appended): methodDefaultSettings for the lab's models; for a Hugging Face folder the
    // config's own settings when `method` is its own method, else methodDefaultSettings.
    virtual std::vector<std::string> methodSettings(const std::string& method, int longestLength) const = 0;
    // The positions `method` with `settings` would use, validated (InputError naming the parameter, its value and what
    // is allowed) without changing the model.
    virtual SchemeSpec positionsUnder(const std::string& method, const std::vector<std::string>& settings) const = 0;
    // Replaces the method in use (zero-shot); the same InputError as positionsUnder.
    virtual void setScaling(const std::string& method, const std::vector<std::string>& settings) = 0;

    // Estimated bytes one window of `length` tokens takes in a forward (memory checks before any work).
    virtual double windowBytes(int length) const = 0;
    // Per-token cross-entropy in nats of B windows of T tokens (inputs and targets (B, T), windows at positions
    // 0..T-1): losses[b T + t] = -log p(targets[b T + t] | inputs[b T .. b T + t]).
    virtual void windowLosses(const int32_t* inputs, const int32_t* targets, int B, int T,
                              std::vector<double>& losses) = 0;
    // While *flag is true a forward may stop early with RunError("cancelled"); null disables. Optional.
    virtual void setCancelFlag(const std::atomic<bool>* flag) { (void)flag; }
};

// The lab's byte-level Model (tokens are bytes, vocabulary 256). Keeps a reference.
class ByteLanguageModel : public LanguageModel {
public:
    explicit ByteLanguageModel(Model& model) : m_model(model) {}
    std::string scheme() const override;
    bool rotary() const override;
    int context() const override;
    int maxLength() const override;
    int vocabulary() const override { return 256; }
    const char* tokenUnit() const override { return "byte"; }
    std::string scaling() const override;
    std::vector<std::string> scalingSettings() const override;
    std::vector<std::string> methodSettings(const std::string& method, int longestLength) const override;
    SchemeSpec positionsUnder(const std::string& method, const std::vector<std::string>& settings) const override;
    void setScaling(const std::string& method, const std::vector<std::string>& settings) override;
    double windowBytes(int length) const override;
    void windowLosses(const int32_t* inputs, const int32_t* targets, int B, int T,
                      std::vector<double>& losses) override;
    void setCancelFlag(const std::atomic<bool>* flag) override;

private:
    Model& m_model;
    std::vector<uint8_t> m_inputs, m_targets;
};

// A Hugging Face folder's HfModel under the config's own scaling (or a method set zero-shot). Keeps a reference.
class HfLanguageModel : public LanguageModel {
public:
    explicit HfLanguageModel(const HfModel& model);
    std::string scheme() const override;
    bool rotary() const override;
    int context() const override;
    int maxLength() const override;
    int vocabulary() const override;
    const char* tokenUnit() const override { return "token"; }
    std::string scaling() const override { return m_scaling; }
    std::vector<std::string> scalingSettings() const override { return m_settings; }
    std::vector<std::string> methodSettings(const std::string& method, int longestLength) const override;
    SchemeSpec positionsUnder(const std::string& method, const std::vector<std::string>& settings) const override;
    void setScaling(const std::string& method, const std::vector<std::string>& settings) override;
    double windowBytes(int length) const override;
    void windowLosses(const int32_t* inputs, const int32_t* targets, int B, int T,
                      std::vector<double>& losses) override;

    const SchemeSpec& positions() const { return m_positions; } // what windowLosses uses
    // The layer types a method set zero-shot reaches (--scaling-layers; hf_scaling_layers.h's rule), full by default.
    void setScalingLayers(HfScalingLayers layers) { m_layers = layers; }
    HfScalingLayers scalingLayers() const { return m_layers; }

private:
    const HfModel& m_model;
    std::string m_scaling;
    std::vector<std::string> m_settings;
    SchemeSpec m_positions;
    HfScalingLayers m_layers = HfScalingLayers::Full;
};

// LanguageModel::methodSettings of a Hugging Face folder from its config alone (no weights needed: a sweep checks its
// grid with it before any cell loads the model): the config's own settings when `method` is its own method, else
// methodDefaultSettings.
std::vector<std::string> hfMethodSettings(const HfConfig& config, const std::string& method, int longestLength);

// A text cut to whole UTF-8 characters at both ends (a corpus split point may fall inside one), what a folder's
// tokenizer reads.
std::string wholeUtf8Characters(const std::vector<uint8_t>& bytes);
// `bytes` (cut to whole characters) as the folder's tokens; the tokenizer's InputError prefixed with `textName`.
std::vector<int32_t> folderTextTokens(const hf::Tokenizer& tokenizer, const std::vector<uint8_t>& bytes,
                                      const std::string& textName);

// Bytes as token ids (0..255), the lab's models' tokens.
std::vector<int32_t> bytesAsTokens(const std::vector<uint8_t>& bytes);

} // namespace plab
