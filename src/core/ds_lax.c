/* ds_lax.c - what DeepSpeed takes besides plain JSON values: pydantic's lax conversions and the
 * "auto" placeholders the Hugging Face Trainer fills (issue 17 part 6).
 *
 * Sources:
 * - pydantic v2 "Conversion Table" / "Booleans" (https://docs.pydantic.dev/latest/api/standard_library_types/#booleans):
 *   in lax mode a bool field takes True/False, the integers 0 and 1, and a str that lower-cased is
 *   one of '0', 'off', 'f', 'false', 'n', 'no', '1', 'on', 't', 'true', 'y', 'yes'.  DeepSpeed's
 *   config models (runtime/config_utils.py DeepSpeedConfigModel) are pydantic BaseModels in lax
 *   mode, and drop any value "auto" before validation unless strict=True.
 * - huggingface/transformers src/transformers/integrations/deepspeed.py (02348331),
 *   HfTrainerDeepSpeedConfig.trainer_config_process / trainer_config_finalize: the keys whose
 *   "auto" is replaced by a TrainingArguments value (fill_match / fill_only).
 */
#include "core/ds_schema.h"

#include <ctype.h>
#include <string.h>

int cfit__pydantic_bool_text(const char *s)
{
    static const char *const yes[] = {"1", "on", "t", "true", "y", "yes"};
    static const char *const no[] = {"0", "off", "f", "false", "n", "no"};
    char low[8];
    size_t n = strlen(s);
    if (n == 0 || n >= sizeof low)
        return -1;
    for (size_t i = 0; i < n && i < sizeof low - 1; i++)
        low[i] = (char)tolower((unsigned char)s[i]);
    low[n] = '\0';
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
        if (strcmp(low, yes[i]) == 0)
            return 1;
        if (strcmp(low, no[i]) == 0)
            return 0;
    }
    return -1;
}

static const struct {
    const char *path;
    const char *from;   /* what the Trainer writes there */
} hf_auto[] = {
    {"train_micro_batch_size_per_gpu", "TrainingArguments.per_device_train_batch_size"},
    {"gradient_accumulation_steps", "TrainingArguments.gradient_accumulation_steps"},
    {"train_batch_size", "world size x per_device_train_batch_size x gradient_accumulation_steps"},
    {"gradient_clipping", "TrainingArguments.max_grad_norm"},
    {"optimizer.params.lr", "TrainingArguments.learning_rate"},
    {"optimizer.params.betas", "TrainingArguments.adam_beta1 and adam_beta2"},
    {"optimizer.params.eps", "TrainingArguments.adam_epsilon"},
    {"optimizer.params.weight_decay", "TrainingArguments.weight_decay"},
    {"scheduler.params.warmup_min_lr", "0"},
    {"scheduler.params.warmup_max_lr", "TrainingArguments.learning_rate"},
    {"scheduler.params.total_num_steps", "the number of training steps"},
    {"scheduler.params.warmup_num_steps", "TrainingArguments' warmup steps"},
    {"fp16.enabled", "TrainingArguments.fp16 (amp backend)"},
    {"amp.enabled", "TrainingArguments.fp16 (apex backend)"},
    {"amp.opt_level", "TrainingArguments.fp16_opt_level"},
    {"bf16.enabled", "TrainingArguments.bf16"},
    {"zero_optimization.reduce_bucket_size", "the model's hidden_size squared"},
    {"zero_optimization.stage3_prefetch_bucket_size", "0.9 x the model's hidden_size squared, under ZeRO-3"},
    {"zero_optimization.stage3_param_persistence_threshold", "10 x the model's hidden_size, under ZeRO-3"},
};

const char *cfit__ds_hf_auto(const char *path)
{
    for (size_t i = 0; i < sizeof hf_auto / sizeof hf_auto[0]; i++)
        if (strcmp(hf_auto[i].path, path) == 0)
            return hf_auto[i].from;
    return NULL;
}
